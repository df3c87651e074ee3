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

# A ctest list older than the run's ATTN_SWEEP_CASES asks for a case the sweep
# does not instantiate: the sweep's main() must fail it, not pass it empty.
add_test(NAME attn-sweep-uninstantiated-case
  COMMAND AttnSweepTests
    --gtest_filter=Sweep/DifferentialSweep.Case/naive_999999)
set_tests_properties(attn-sweep-uninstantiated-case PROPERTIES
  PASS_REGULAR_EXPRESSION "selects no test: the case is not instantiated")
