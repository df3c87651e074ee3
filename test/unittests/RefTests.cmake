# Tests for the f64 reference (AttnReference) and the .npy support library
# (AttnSupport). Both are plain C++: no MLIR libraries are linked.
add_executable(AttnRefTests
  ReferenceTest.cpp
  NpyTest.cpp
  PagedReferenceTest.cpp
)
target_link_libraries(AttnRefTests PRIVATE
  AttnReference AttnSupport GTest::gtest GTest::gtest_main)
include(GoogleTest)
gtest_discover_tests(AttnRefTests DISCOVERY_MODE PRE_TEST)
