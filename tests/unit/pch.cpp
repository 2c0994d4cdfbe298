// The carrier of the tests' precompiled header (tests/CMakeLists.txt).
