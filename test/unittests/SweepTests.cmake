# The randomized differential sweep: attn specs compiled with the JIT in every
# form under test, run on seeded inputs and compared with the f64 reference.
# See DifferentialTest.cpp for the environment variables (seed, case, forms,
# replay).
add_executable(AttnSweepTests
  DifferentialTest.cpp
)
target_link_libraries(AttnSweepTests PRIVATE
  AttnExecution AttnIR AttnSupport AttnReference ${ATTN_MLIR_LIBS}
  GTest::gtest)
llvm_update_compile_flags(AttnSweepTests)
include(GoogleTest)
gtest_discover_tests(AttnSweepTests DISCOVERY_MODE PRE_TEST
  DISCOVERY_TIMEOUT 60)
