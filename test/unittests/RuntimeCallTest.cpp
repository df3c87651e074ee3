//===- RuntimeCallTest.cpp - attn_kernel_call past its inline buffers -----===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//
//
// attn_kernel_call keeps a call's named sizes, memref descriptors, argument
// pointers and dense copies in inline arrays (32 names, 256 descriptor
// words, 32 tensors), and on the heap past them. Generated kernels never
// have that many tensors, so this test calls a kernel written here (its
// info and its packed entry point) with 40 rank-4 tensors and 118 named
// dimensions: every buffer takes its heap path. The kernel records the
// descriptors it gets and copies its strided input to its strided output;
// the test checks both against the tensors, and that a size disagreeing
// with one seen past the first 32 names is still a located error.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Kernel.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kTensors = 40;
constexpr int kRank = 4;
/// The strided input (transposed last two dimensions) and output.
constexpr int kStridedIn = 35;
constexpr int kOut = kTensors - 1;

/// What the fake kernel saw: each descriptor's words.
std::vector<std::vector<int64_t>> seenDescriptors;

/// The packed entry point: args[i] points at tensor i's memref descriptor
/// {allocated, aligned, offset, sizes[4], strides[4]}. Records them, then
/// copies the (dense) input kStridedIn into the (dense) output.
void fakeInvoke(void **args) {
  seenDescriptors.clear();
  for (int i = 0; i < kTensors; ++i) {
    auto *d = static_cast<int64_t *>(args[i]);
    seenDescriptors.emplace_back(d, d + 3 + 2 * kRank);
  }
  auto *in = static_cast<int64_t *>(args[kStridedIn]);
  auto *out = static_cast<int64_t *>(args[kOut]);
  int64_t n = 1;
  for (int d = 0; d < kRank; ++d)
    n *= in[3 + d];
  std::memcpy(reinterpret_cast<float *>(out[1]),
              reinterpret_cast<const float *>(in[1]), n * sizeof(float));
}

struct ManyTensors {
  // Names: tensor i has dimensions "t<i>a", "t<i>b", "t<i>c" of its own and
  // "S" (shared by all); the input kStridedIn and the output share all four.
  std::vector<std::vector<std::string>> nameStrings;
  std::vector<std::vector<const char *>> names;
  std::vector<std::string> tensorNames;
  std::vector<attn_tensor_info_t> infos;
  const int64_t dynamic[kRank] = {-1, -1, -1, -1};
  attn_kernel_info_t kernel{};
  // Data: tensor i has shape {2, 1 + i % 3, 3, 4} (the output: the strided
  // input's), float32.
  std::vector<std::vector<int64_t>> shapes, strides;
  std::vector<std::vector<float>> data;
  std::vector<DLTensor> tensors;
  std::vector<DLTensor *> pointers;

  ManyTensors() {
    nameStrings.resize(kTensors);
    names.resize(kTensors);
    for (int i = 0; i < kTensors; ++i) {
      int owner = i == kOut ? kStridedIn : i;
      for (char c : {'a', 'b', 'c'})
        nameStrings[i].push_back("t" + std::to_string(owner) + c);
      nameStrings[i].push_back("S");
      tensorNames.push_back(i == kOut ? "out" : "in" + std::to_string(i));
    }
    for (int i = 0; i < kTensors; ++i) {
      for (const std::string &s : nameStrings[i])
        names[i].push_back(s.c_str());
      attn_tensor_info_t info{};
      info.name = tensorNames[i].c_str();
      info.dtype = {kDLFloat, 32, 1};
      info.ndim = kRank;
      info.is_output = i == kOut;
      info.shape = dynamic;
      info.dim_names = names[i].data();
      infos.push_back(info);
    }
    kernel.abi_version = ATTN_KERNEL_ABI_VERSION;
    kernel.name = "many";
    kernel.symbol = "attn_many";
    kernel.num_inputs = kTensors - 1;
    kernel.num_outputs = 1;
    kernel.tensors = infos.data();
    kernel.target_cpu = "generic";
    kernel.form = "naive";
    kernel.invoke_packed = fakeInvoke;

    for (int i = 0; i < kTensors; ++i) {
      int owner = i == kOut ? kStridedIn : i;
      shapes.push_back({2, 1 + owner % 3, 3, 4});
      const std::vector<int64_t> &s = shapes.back();
      if (i == kStridedIn || i == kOut)
        // Row-major over {2, b, 4, 3}, read as {2, b, 3, 4}.
        strides.push_back({s[1] * 12, 12, 1, 3});
      else
        strides.push_back({s[1] * 12, 12, 4, 1});
      std::vector<float> values(s[0] * s[1] * 12);
      for (size_t e = 0; e < values.size(); ++e)
        values[e] = i == kOut ? -1.0f : float(i * 1000 + e);
      data.push_back(std::move(values));
    }
    for (int i = 0; i < kTensors; ++i) {
      DLTensor t{};
      t.data = data[i].data();
      t.device = {kDLCPU, 0};
      t.ndim = kRank;
      t.dtype = {kDLFloat, 32, 1};
      t.shape = shapes[i].data();
      t.strides = strides[i].data();
      tensors.push_back(t);
    }
    for (DLTensor &t : tensors)
      pointers.push_back(&t);
  }
};

TEST(RuntimeCall, ManyTensorsTakeTheHeapPaths) {
  ManyTensors m;
  attn_status_t s =
      attn_kernel_call(&m.kernel, m.pointers.data(), kTensors, nullptr);
  ASSERT_EQ(s, ATTN_STATUS_OK) << attn_last_error();
  ASSERT_EQ(seenDescriptors.size(), size_t(kTensors));
  for (int i = 0; i < kTensors; ++i) {
    const std::vector<int64_t> &d = seenDescriptors[i];
    const std::vector<int64_t> &shape = m.shapes[i];
    // Contiguous tensors are passed in place; the strided ones as dense
    // copies in the workspace.
    if (i != kStridedIn && i != kOut)
      EXPECT_EQ(d[1], reinterpret_cast<int64_t>(m.data[i].data())) << i;
    else
      EXPECT_NE(d[1], reinterpret_cast<int64_t>(m.data[i].data())) << i;
    EXPECT_EQ(d[2], 0) << i;
    for (int k = 0; k < kRank; ++k)
      EXPECT_EQ(d[3 + k], shape[k]) << i << " size " << k;
    std::vector<int64_t> rowMajor = {shape[1] * 12, 12, 4, 1};
    for (int k = 0; k < kRank; ++k)
      EXPECT_EQ(d[3 + kRank + k], rowMajor[k]) << i << " stride " << k;
  }
  // The output, scattered back to its strides, equals the input element by
  // element (both are the transposed view of their buffers).
  const std::vector<int64_t> &shape = m.shapes[kOut];
  const std::vector<int64_t> &st = m.strides[kOut];
  for (int64_t a = 0; a < shape[0]; ++a)
    for (int64_t b = 0; b < shape[1]; ++b)
      for (int64_t c = 0; c < shape[2]; ++c)
        for (int64_t e = 0; e < shape[3]; ++e) {
          int64_t off = a * st[0] + b * st[1] + c * st[2] + e * st[3];
          EXPECT_EQ(m.data[kOut][off], m.data[kStridedIn][off])
              << a << "," << b << "," << c << "," << e;
        }
}

TEST(RuntimeCall, NameMismatchPastTheInlineNames) {
  ManyTensors m;
  // "t35b" is first seen at tensor 35 (name 107, past the 32 inline ones);
  // the output's dimension 1 disagrees with it.
  int64_t wrong = m.shapes[kOut][1] + 1;
  m.shapes[kOut][1] = wrong;
  m.data[kOut].resize(m.shapes[kOut][0] * wrong * 12);
  m.tensors[kOut].data = m.data[kOut].data();
  m.strides[kOut] = {wrong * 12, 12, 1, 3};
  m.tensors[kOut].strides = m.strides[kOut].data();
  attn_status_t s =
      attn_kernel_call(&m.kernel, m.pointers.data(), kTensors, nullptr);
  EXPECT_EQ(s, ATTN_STATUS_SHAPE_MISMATCH);
  std::string expected =
      "output out: size t35b = " + std::to_string(wrong) +
      " (dimension 1) disagrees with t35b = " + std::to_string(wrong - 1) +
      " of in35";
  EXPECT_EQ(std::string(attn_last_error()), expected);
}

} // namespace
