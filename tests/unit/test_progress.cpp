// Which progress mechanism a process gets (front/progress.hpp): the
// library's own hook first, the thread only where asked and safe.
#include <gtest/gtest.h>

#include <string>

#include "front/progress.hpp"

namespace {

using a2a::detail::choose_progress;
using a2a::detail::ProgressMode;
using a2a::detail::ProgressOffer;

TEST(Progress, EveryOfferChoosesOneMechanism) {
  for (int bits = 0; bits < 8; ++bits) {
    const ProgressOffer o{(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0};
    const ProgressMode want = o.opal                                 ? ProgressMode::opal
                              : o.thread_asked && o.thread_multiple ? ProgressMode::thread
                                                                     : ProgressMode::none;
    EXPECT_EQ(choose_progress(o), want) << "opal " << o.opal << ", asked " << o.thread_asked << ", multiple "
                                        << o.thread_multiple;
  }
}

TEST(Progress, TheLineSaysWhyThereIsNone) {
  using a2a::detail::progress_line;
  const std::string asked = progress_line(ProgressMode::none, {false, true, false});
  EXPECT_NE(asked.find("needs MPI_THREAD_MULTIPLE"), std::string::npos) << asked;
  const std::string plain = progress_line(ProgressMode::none, {});
  EXPECT_EQ(plain.find("MPI_THREAD_MULTIPLE"), std::string::npos) << plain;
  EXPECT_NE(std::string(progress_line(ProgressMode::opal, {true, false, false})).find("opal_progress_register"),
            std::string::npos);
  EXPECT_NE(std::string(progress_line(ProgressMode::thread, {false, true, true})).find("A2A_PROGRESS_THREAD"),
            std::string::npos);
}

}  // namespace
