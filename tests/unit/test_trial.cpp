// auto's trial arithmetic (select/trial.hpp): whose turn each call is, how
// the winner is chosen from the reduced times, and when a decided pick
// counts as drifted.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "select/trial.hpp"

using namespace a2a::detail;

// Every candidate takes one turn of kTrialRepeat calls per round, rounds
// alternate their order (ABBA), and each candidate gets kCheckRounds timed
// calls between checks, each the last of its turn (after a call of its own).
TEST(Trial, TurnsAndRounds) {
  static_assert(kTrialRepeat == 2, "the turns below are spelt out for pairs");
  const int two[] = {0, 0, 1, 1, 1, 1, 0, 0};
  for (int call = 0; call < 8; ++call) EXPECT_EQ(trial_turn(call, 2), two[call]) << call;
  EXPECT_EQ(trial_turn(6, 3), 2);   // round 1 reversed: 2, 1, 0
  EXPECT_EQ(trial_turn(10, 3), 0);
  for (int n = 1; n <= 4; ++n) {
    std::map<int, int> timed, all;
    for (int call = 0; call < check_calls(n); ++call) {
      const int t = trial_turn(call, n);
      ASSERT_GE(t, 0);
      ASSERT_LT(t, n);
      ++all[t];
      if (trial_timed(call)) {
        ++timed[t];
        ASSERT_GT(call, 0);
        EXPECT_EQ(trial_turn(call - 1, n), t) << "a timed call follows its own candidate's";
      }
    }
    for (int t = 0; t < n; ++t) {
      EXPECT_EQ(all[t], kCheckRounds * kTrialRepeat);
      EXPECT_EQ(timed[t], kCheckRounds);
    }
  }
  // An application alternating two call shapes gives every candidate the
  // same mix of them in its timed calls.
  std::map<int, std::map<int, int>> shapes;
  for (int call = 0; call < check_calls(2); ++call)
    if (trial_timed(call)) ++shapes[trial_turn(call, 2)][call % 2];
  EXPECT_EQ(shapes[0], shapes[1]);
}

TEST(Trial, MedianOfSamples) {
  EXPECT_EQ(median_of({}), 0);
  EXPECT_EQ(median_of({3}), 3);
  EXPECT_EQ(median_of({5, 1, 3}), 3);
  EXPECT_EQ(median_of({4, 1, 3, 100}), 3.5);  // one descheduled call does not decide
}

// Native keeps its place unless another candidate is at most kTrialMargin
// of its time; then the fastest wins; missing times never win.
TEST(Trial, WinnerPrefersNativeOnATie) {
  EXPECT_EQ(trial_winner({1.0, 1.0}, 1), 1);          // a tie: native
  EXPECT_EQ(trial_winner({0.98, 1.0}, 1), 1);         // within the margin: native
  EXPECT_EQ(trial_winner({0.9, 1.0}, 1), 0);          // clearly faster
  EXPECT_EQ(trial_winner({0.9, 1.0, 0.5}, 1), 2);     // the fastest of the others
  EXPECT_EQ(trial_winner({2.0, 1.0, 3.0}, 1), 1);     // the model was wrong: native
  EXPECT_EQ(trial_winner({0.0, 1.0}, 1), 1);          // no sample: never wins
  EXPECT_EQ(trial_winner({0.5, 0.4}, -1), 1);         // no native: the fastest
  EXPECT_EQ(trial_winner({1.0, 0.0}, 1), 0);          // native without a time
}

// A check's agreed times, from each rank's samples (per candidate,
// seconds; every call of `bytes`), packed and folded as its allreduce does.
TrialTimes agreed(const std::vector<std::vector<std::vector<double>>>& ranks, double bytes = 1024) {
  TrialAgreement all;
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::vector<std::vector<TrialSample>> samples;
    std::vector<double> medians;
    for (const auto& candidate : ranks[r]) {
      samples.emplace_back();
      for (double s : candidate) samples.back().push_back({s, bytes});
      medians.push_back(median_of(candidate));
    }
    const TrialAgreement mine = trial_pack(medians, samples, bytes);
    if (r == 0) all = mine;
    else trial_fold(mine, all);
  }
  return trial_unpack(all, ranks.empty() ? 0 : ranks[0].size());
}

// From the second check the medians decide where the winner and native
// are kClear apart; closer, the two go on alone (native and the fastest
// other where native won), until the last check decides whatever the times.
TEST(Trial, CloseMediansGoOnAsAPair) {
  // Samples close enough that no candidate leaves by its extremes.
  const auto times = [](std::vector<double> medians) {
    TrialTimes t;
    for (double m : medians) t.median.push_back(m), t.slowest.push_back(2 * m), t.fastest.push_back(m / 2);
    return t;
  };
  EXPECT_EQ(trial_check(times({0.9, 1.0}), 1, 1).winner, -1) << "the first check: no median decides";
  CheckEnd end = trial_check(times({0.9, 1.0}), 1, 2);  // within kClear of native
  EXPECT_EQ(end.winner, -1);
  EXPECT_EQ(end.stay, (std::vector<int>{0, 1}));
  end = trial_check(times({0.95, 1.0, 0.85}), 1, 2);  // the winner and native, not the runner-up
  EXPECT_EQ(end.stay, (std::vector<int>{2, 1}));
  EXPECT_EQ(trial_check(times({0.5, 1.0}), 1, 2).winner, 0);  // clearly faster
  EXPECT_EQ(trial_check(times({0.8, 1.0}), 1, 2).winner, 0);  // at the bound: kept
  end = trial_check(times({1.0, 0.9}), 1, 2);                 // native won closely
  EXPECT_EQ(end.stay, (std::vector<int>{1, 0}));
  end = trial_check(times({1.2, 1.0, 1.1}), 1, 2);  // against the fastest other
  EXPECT_EQ(end.stay, (std::vector<int>{1, 2}));
  EXPECT_EQ(trial_check(times({1.3, 1.0}), 1, 2).winner, 1);  // native clearly
  EXPECT_EQ(trial_check(times({0.0, 1.0}), 1, 2).winner, 1);  // no other with a time
  EXPECT_EQ(trial_check(times({0.9, 1.0}), -1, 2).winner, 0);  // no native: the fastest
  EXPECT_EQ(trial_check(times({0.9, 0.0}), 1, 2).winner, 0);   // native without a time
  EXPECT_EQ(trial_check(times({0.9, 1.0}), 1, kMostChecks).winner, 0) << "the last check decides";
  EXPECT_EQ(trial_check(times({0.98, 1.0}), 1, kMostChecks).winner, 1) << "native within kTrialMargin";
  EXPECT_EQ(most_trial_calls(3), 2 * check_calls(3) + (kMostChecks - 2) * check_calls(2));
  EXPECT_EQ(most_trial_calls(1), check_calls(1));
}

// The watch flags a rank once the median of its last kTrialRounds
// samples runs more than kFar times the trial's time, scaled up (never
// down) by the bytes moved.
TEST(Trial, DriftWatch) {
  DriftWatch w;
  w.sample(100, 1);  // nothing to compare with yet
  EXPECT_FALSE(w.flagged());
  w.reset(1e-6, 1000);
  for (int i = 0; i < kTrialRounds; ++i) w.sample(1.2e-6, 1000);
  EXPECT_FALSE(w.flagged()) << "within kFar";
  for (int i = 0; i < kTrialRounds; ++i) w.sample(1.9e-6, 4000);  // 4x the bytes: 4 us expected
  EXPECT_FALSE(w.flagged()) << "larger calls may take longer";
  w.sample(5e-6, 100);  // one slow sample among normal ones
  EXPECT_FALSE(w.flagged()) << "one sample is not a drift";
  for (int i = 0; i < kTrialRounds; ++i) w.sample(2e-6, 100);  // smaller calls: no discount
  EXPECT_TRUE(w.flagged());
  w.reset(1e-6, 1000);
  EXPECT_FALSE(w.flagged()) << "a new trial starts a new watch";
  for (int i = 0; i < kTrialRounds; ++i) w.sample(1e-6, 1000 * kFar * 2);
  EXPECT_FALSE(w.flagged()) << "a class of one size range does not watch sizes";
}

// The class of every alltoallv size runs its trial again when the calls
// move kFar times more bytes than its trial's largest, or fewer than
// its smallest: one timed call suffices, however fast.
TEST(Trial, EverySizeWatchesSizes) {
  DriftWatch w;
  w.reset(1e-6, 1000);
  w.watch_sizes(500, 1000);
  w.sample(1e-6, 1000 * kFar);
  w.sample(1e-6, 500 / kFar);
  EXPECT_FALSE(w.flagged()) << "within kFar of the trial's range";
  w.sample(1e-9, 1000 * kFar * 1.01);
  EXPECT_TRUE(w.flagged());
  EXPECT_TRUE(w.moved());
  w.reset(1e-6, 1000);
  w.watch_sizes(500, 1000);
  w.sample(1e-6, 500 / (kFar * 1.01));
  EXPECT_TRUE(w.moved()) << "smaller calls too";
  w.reset(1e-6, 0);
  w.watch_sizes(0, 0);
  w.sample(1e-6, 16);
  EXPECT_TRUE(w.moved()) << "a trial of empty calls";
  w.reset(1e-6, 1000);
  for (int i = 0; i < kTrialRounds; ++i) w.sample(1e-6, 1000 * kFar * 2);
  EXPECT_FALSE(w.moved()) << "a reset watches no sizes";
  w.watch_sizes(1000, 1000);
  for (int i = 0; i < kTrialRounds; ++i) w.sample(2e-6, 1000);
  EXPECT_TRUE(w.flagged());
  EXPECT_FALSE(w.moved()) << "a drift of the times alone";
}

// The agreement on moved sizes (each a drift sample) comes as often as its
// allreduce costs at most 1 % of the class's calls: every call of a
// millisecond, so that a sweep of sizes is followed within a few calls.
TEST(Trial, SizeCheckCostsOnePercent) {
  EXPECT_EQ(size_check_every(1e-6, 1e-3), 1);                // long calls: every call
  EXPECT_EQ(size_check_every(1e-6, 0.5e-6), 200);            // 200 calls of 0.5 us for 1 us
  EXPECT_EQ(size_check_every(2e-6, 70e-6), 3);               // 2.9 calls: 3
  EXPECT_EQ(size_check_every(1e-3, 1e-7), kFirstCheck);      // never rarer than the drift check
  EXPECT_EQ(size_check_every(1e-6, 0), kFirstCheck);         // no time: the drift check's
  for (double call : {1e-7, 1e-6, 3e-6, 1e-5, 1e-3, 1e-1}) {
    const long long every = size_check_every(2e-6, call);
    EXPECT_GE(every, 1);
    if (every < kFirstCheck) {
      EXPECT_LE(2e-6 / (static_cast<double>(every) * call), 1 / kSizeCheckShare + 1e-12);
    }
  }
}

// A candidate leaves at any check where every timed call of another, on
// every rank, beat every call of its own by 1 / kClear: one lost time
// slice can keep it in, never put it out.
TEST(Trial, ClearLosersLeave) {
  // native (0) against shm at 2x (P = 2 without single copy, 8 MiB)
  EXPECT_EQ(trial_check(agreed({{{50, 52}, {90, 95}}, {{51, 49}, {92, 88}}}), 0, 1).winner, 0);
  EXPECT_EQ(trial_check(agreed({{{90, 95}, {50, 52}}, {{92, 88}, {51, 49}}}), 0, 1).winner, 1);
  // three candidates: one clear of both others wins; a clear loser alone leaves
  EXPECT_EQ(trial_check(agreed({{{50, 52}, {90, 95}, {70, 70}}, {{51, 49}, {92, 88}, {70, 71}}}), 0, 1).winner, 0);
  CheckEnd end = trial_check(agreed({{{50, 52}, {90, 95}, {60, 70}}, {{51, 49}, {92, 88}, {70, 71}}}), 0, 1);
  EXPECT_EQ(end.winner, -1);
  EXPECT_EQ(end.stay, (std::vector<int>{0, 2}));
  // medians 1.7x apart, but one of shm's calls on one rank close: go on
  EXPECT_EQ(trial_check(agreed({{{50, 52}, {90, 95}}, {{51, 49}, {60, 88}}}), 0, 1).stay.size(), 2u);
  // the winner's one lost time slice: go on (never a wrong early pick)
  EXPECT_EQ(trial_check(agreed({{{50, 400}, {90, 95}}, {{51, 49}, {92, 88}}}), 0, 1).stay.size(), 2u);
  // close (the machine's 10-30 %): the medians decide later
  EXPECT_EQ(trial_check(agreed({{{50, 52}, {60, 58}}, {{51, 49}, {61, 62}}}), 0, 1).stay.size(), 2u);
  // ranks that move different bytes (alltoallv), each in calls of one size: compared
  TrialAgreement ranks = trial_pack({51, 92}, {{{50, 1024}, {52, 1024}}, {{90, 1024}, {95, 1024}}}, 1024);
  trial_fold(trial_pack({50, 90}, {{{51, 4096}, {49, 4096}}, {{92, 4096}, {88, 4096}}}, 4096), ranks);
  EXPECT_EQ(trial_check(trial_unpack(ranks, 2), 0, 1).winner, 0);
  // a rank's calls of different sizes (an every-size class): raw times not comparable
  TrialAgreement varied = trial_pack({51, 92}, {{{50, 1024}, {52, 1024}}, {{90, 1024}, {95, 1024}}}, 1024);
  trial_fold(trial_pack({50, 90}, {{{51, 1024}, {49, 1024}}, {{92, 4096}, {88, 1024}}}, 1024), varied);
  EXPECT_EQ(trial_check(trial_unpack(varied, 2), 0, 1).stay.size(), 2u);
  // a candidate without samples neither leaves nor puts another out
  EXPECT_EQ(trial_check(agreed({{{50, 52}, {}}}), 0, 1).stay.size(), 2u);
  // beyond the agreement's slots a candidate has no samples (the model proposes 3)
  const TrialTimes five = agreed({{{50}, {90}, {90}, {90}, {90}}});
  EXPECT_EQ(five.median.size(), 5u);
  EXPECT_EQ(five.median[4], 0);
  EXPECT_EQ(trial_check(five, 0, 1).stay, (std::vector<int>{0, 4}));
}

// One slow agreement (a descheduled rank) must not space the next ones
// hundreds of calls apart: the pace at most doubles per agreement, falls
// at once, and a cost that persists reaches its pace.
TEST(Trial, PaceAtMostDoubles) {
  EXPECT_EQ(next_pace(0, 896), 896);  // the first pace: as wanted
  EXPECT_EQ(next_pace(12, 896), 24);  // 80 us once for 9 us calls
  EXPECT_EQ(next_pace(24, 12), 12);   // typical again: back at once
  EXPECT_EQ(next_pace(12, 20), 20);
  long long pace = 12;
  int agreements = 0;
  while (pace < kFirstCheck && agreements < 20) pace = next_pace(pace, kFirstCheck), ++agreements;
  EXPECT_EQ(pace, kFirstCheck);
  EXPECT_LE(agreements, 7);
  // A quiet decided class's drift checks: kFirstCheck, doubling to kLastCheck.
  for (pace = kFirstCheck, agreements = 0; pace < kLastCheck; ++agreements) pace = next_pace(pace, kLastCheck);
  EXPECT_EQ(pace, kLastCheck);
  EXPECT_EQ(agreements, 6);
}

// Where calls vary in size the candidates' timed calls moved different
// bytes: a candidate that is 1.25x slower at every size but drew the small
// calls (a frontier that grows while the trial runs) wins on raw times and
// loses once each sample is taken to one size by the library's exchange
// shape; calls of one size keep their raw medians, and without a model the
// raw medians stand.
TEST(Trial, TimesTakenToOneSize) {
  LinkCost link;
  link.alpha = 1e-6;
  link.beta = 1e-10;
  const int P = 4;
  const auto shape = [&](double bytes) { return exchange_seconds(link, P, bytes); };
  EXPECT_LT(shape(1e3), shape(1e5));
  EXPECT_LT(shape(1e5), shape(1e7));
  EXPECT_NEAR(shape(6e6), 3 * (1e-6 + 1e-10 * 1e6), 1e-9) << "P - 1 blocks of bytes / (2 (P - 1))";
  // Candidate 0 (fast) at 64..512 KB, candidate 1 (1.25x) at 1..8 KB.
  std::vector<std::vector<TrialSample>> s(2);
  for (double b : {64e3, 128e3, 256e3, 512e3}) s[0].push_back({shape(b), b});
  for (double b : {1e3, 2e3, 4e3, 8e3}) s[1].push_back({1.25 * shape(b), b});
  double ref = 0;
  const std::vector<double> raw = trial_times(s, nullptr, P, ref);
  EXPECT_LT(raw[1], raw[0]) << "raw times rank the sizes";
  const std::vector<double> t = trial_times(s, &link, P, ref);
  EXPECT_DOUBLE_EQ(ref, (8e3 + 64e3) / 2) << "the median of every sample's bytes";
  EXPECT_NEAR(t[0], shape(ref), 1e-12);
  EXPECT_NEAR(t[1], 1.25 * shape(ref), 1e-12);
  EXPECT_EQ(trial_winner(t, 0), 0);
  // One size: the raw medians, whatever the model.
  std::vector<std::vector<TrialSample>> same = {{{3e-6, 5e3}, {1e-6, 5e3}, {2e-6, 5e3}}, {{4e-6, 5e3}}};
  const std::vector<double> u = trial_times(same, &link, P, ref);
  EXPECT_EQ(ref, 5e3);
  EXPECT_EQ(u[0], 2e-6);
  EXPECT_EQ(u[1], 4e-6);
}

// The agreed time is the slowest rank's median.  Rank 0 leaves shm's calls
// early (lightly loaded), rank 1 late: the ranks' mean of medians would put
// shm below native, which the calls, ending with rank 1, were not.
TEST(Trial, AgreedTimesAreTheSlowestRanks) {
  const std::vector<double> rank0 = {2.5, 5}, rank1 = {7.5, 5.5};  // shm, native
  TrialAgreement a = trial_pack(rank0, {}, 100), b = trial_pack(rank1, {}, 300);
  trial_fold(b, a);
  const std::vector<double> t = {trial_unpack(a, 2).median};
  EXPECT_EQ(t, (std::vector<double>{7.5, 5.5}));
  EXPECT_EQ(trial_winner(t, 1), 1);
  EXPECT_EQ(trial_winner({(2.5 + 7.5) / 2, (5 + 5.5) / 2}, 1), 0) << "the mean of medians would have kept shm";
  EXPECT_EQ(trial_unpack(a, 2).bytes, 400) << "bytes are summed (their mean names the size class)";
  // The fold is symmetric, as a commutative MPI_Op must be.
  TrialAgreement c = trial_pack(rank1, {}, 300);
  trial_fold(trial_pack(rank0, {}, 100), c);
  for (int i = 0; i < kTrialSlots; ++i) EXPECT_EQ(c.slot[i], a.slot[i]) << i;
}

// A rank's lost time slice in one sample moves its median, not the
// agreement: the slowest rank's median, not each call's slowest rank.
TEST(Trial, OneLostSliceDoesNotDecide) {
  // shm's calls 3 us, one of each rank's four lost a slice (4 ms), on
  // different calls; native's 7 us.
  const std::vector<std::vector<double>> shm = {{4e-3, 3e-6, 3e-6, 3e-6}, {3e-6, 4e-3, 3e-6, 3e-6},
                                                {3e-6, 3e-6, 4e-3, 3e-6}, {3e-6, 3e-6, 3e-6, 4e-3}};
  TrialAgreement all = trial_pack({median_of(shm[0]), 7e-6}, {}, 0);
  for (int r = 1; r < 4; ++r) trial_fold(trial_pack({median_of(shm[static_cast<size_t>(r)]), 7e-6}, {}, 0), all);
  EXPECT_EQ(trial_winner(trial_unpack(all, 2).median, 1), 0);
}

// A trial driven by its pure transitions alone, on candidates of fixed
// times (seconds per call, every rank alike): it ends within
// most_trial_calls, at the first check where a loser is clear, and with
// the winner the medians name.
struct Driven {
  int winner = -1, calls = 0;
};
Driven drive(const std::vector<double>& seconds, int native_at) {
  std::vector<int> in(seconds.size());
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i);
  std::vector<std::vector<TrialSample>> samples(seconds.size());
  Driven d;
  for (int check = 1; check <= kMostChecks; ++check) {
    const int n = static_cast<int>(in.size());
    for (int call = 0; call < check_calls(n); ++call, ++d.calls)
      if (trial_timed(call)) {
        const int i = in[static_cast<size_t>(trial_turn(call, n))];
        samples[static_cast<size_t>(i)].push_back({seconds[static_cast<size_t>(i)], 64});
      }
    std::vector<std::vector<TrialSample>> mine;
    int native = -1;
    for (int i : in) {
      if (i == native_at) native = static_cast<int>(mine.size());
      mine.push_back(samples[static_cast<size_t>(i)]);
    }
    double ref = 0;
    const std::vector<double> medians = trial_times(mine, nullptr, 2, ref);
    const CheckEnd end = trial_check(trial_unpack(trial_pack(medians, mine, 64), mine.size()), native, check);
    if (end.winner >= 0) {
      d.winner = in[static_cast<size_t>(end.winner)];
      return d;
    }
    std::vector<int> stay;
    for (int i : end.stay) stay.push_back(in[static_cast<size_t>(i)]);
    in = stay;
  }
  return d;
}

TEST(Trial, PhasesMoveByTheTransitions) {
  Driven d = drive({0.5, 1.0, 0.9}, 1);  // a clear winner: the first check
  EXPECT_EQ(d.winner, 0);
  EXPECT_EQ(d.calls, check_calls(3));
  d = drive({0.9, 1.0, 0.95}, 1);  // close: the pair to the last check
  EXPECT_EQ(d.winner, 0);
  EXPECT_EQ(d.calls, most_trial_calls(3));
  d = drive({0.99, 1.0}, 1);  // a tie: native
  EXPECT_EQ(d.winner, 1);
  EXPECT_EQ(d.calls, most_trial_calls(2));
  d = drive({0.85, 1.0, 2.0}, 1);  // the clear loser leaves at the first check, the close two go on
  EXPECT_EQ(d.winner, 0);
  EXPECT_EQ(d.calls, check_calls(3) + (kMostChecks - 1) * check_calls(2));
  d = drive({1.0}, 0);  // a trial of one: its times for the drift watch
  EXPECT_EQ(d.winner, 0);
  EXPECT_EQ(d.calls, most_trial_calls(1));
  // A decided class's agreement.
  EXPECT_EQ(event_end(false, false, true), EventEnd::keep);
  EXPECT_EQ(event_end(true, false, true), EventEnd::try_again);   // times drifted: a trial
  EXPECT_EQ(event_end(false, true, true), EventEnd::take_kept);   // sizes moved to a class tried before
  EXPECT_EQ(event_end(false, true, false), EventEnd::try_again);  // to a new one
  EXPECT_EQ(event_end(true, true, true), EventEnd::take_kept);    // a drift then was of the old sizes
}
