// Padding for the padded algorithms: every block is copied into a place of
// the global largest block M, so a uniform all-to-all can move them, and the
// real bytes are taken back out afterwards.  Scratch 2*P*M bytes; above the
// scratch limit the caller falls back (Result::fallback()).
#pragma once
#include "core/algorithm.hpp"

namespace a2a::detail {

struct Padded {
  explicit Padded(Scratch& s) : frame(s) {}
  Scratch::Frame frame;  // held while the uniform algorithm runs on the padded blocks
  char* send = nullptr;
  char* recv = nullptr;
  size_t M = 0;
};

// Fills `out`; Result::fallback() when 2*P*M exceeds the scratch limit.
Task<Result> pad(const VarCall& c, Padded& out);
void unpad(const VarCall& c, const Padded& padded);

}  // namespace a2a::detail
