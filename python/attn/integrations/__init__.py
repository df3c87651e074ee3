"""Integrations of attn kernels into frameworks (optional dependencies):
``attn.integrations.transformers`` (Hugging Face transformers)."""
