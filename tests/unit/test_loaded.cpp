// LoadedObject: the answer follows objects loaded after a miss, and misses
// do not rescan while nothing new was loaded.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "core/loaded.hpp"

using a2a::detail::LoadedObject;

TEST(LoadedObject, SeesTheCLibrary) {
  LoadedObject libc("libc.so");
  EXPECT_TRUE(libc.loaded());
  EXPECT_TRUE(libc.loaded());
  EXPECT_EQ(libc.scans(), 1);
}

TEST(LoadedObject, MissesDoNotRescanUntilALoad) {
  LoadedObject probe("liba2a_loaded_probe");
  EXPECT_FALSE(probe.loaded());
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(probe.loaded());
  EXPECT_EQ(probe.scans(), 1);
  void* h = dlopen(A2A_LOADED_PROBE, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  EXPECT_TRUE(probe.loaded());
  EXPECT_EQ(probe.scans(), 2);
  EXPECT_TRUE(probe.loaded());
  EXPECT_EQ(probe.scans(), 2);
}
