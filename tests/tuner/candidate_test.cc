// A candidate's identity, and the first candidates a fixed config and seed propose, pinned by their database keys.
// The pinned keys were computed before the tuner's interfaces were refactored (issue 15), by the tuning loop's own
// formula then: a change here means resumed databases would no longer find their measured candidates. The global
// fusion's keys changed once since, with its schedules, when a CPU's plans stopped prefetching (docs/plans.md).
#include "tuner/candidate.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "configs/run_config.h"
#include "ir/hash.h"
#include "tuner/tune_job.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

// A target key of no real machine: the real one names this CPU, so keys differ from machine to machine.
const std::string kPinnedTarget = "cpu:pinned:threads=1";

Schedule split_schedule() {
  Schedule s;
  s.split("C", "i", 2);
  return s;
}

TEST(Candidate, KeyIsTheHashOfWorkloadTargetAndScheduleLines) {
  Candidate c("0123456789abcdef", kPinnedTarget, Schedule());
  EXPECT_EQ(c.schedule_json(), R"({"decisions":[],"version":1})");
  EXPECT_EQ(c.hash_hex(), "29a4629546f6af06");
  EXPECT_EQ(c.hash(), fnv1a64("0123456789abcdef\n" + kPinnedTarget + "\n" + c.schedule_json()));
  EXPECT_EQ(c.hash_hex(), hash_hex(c.hash()));
}

TEST(Candidate, EqualWhenWorkloadTargetAndScheduleAre) {
  Candidate a("0123456789abcdef", kPinnedTarget, split_schedule());
  EXPECT_EQ(a, Candidate("0123456789abcdef", kPinnedTarget, split_schedule()));
  EXPECT_NE(a.hash(), Candidate("0123456789abcdef", kPinnedTarget, Schedule()).hash());
  EXPECT_FALSE(a == Candidate("0123456789abcdef", kPinnedTarget, Schedule()));
  EXPECT_FALSE(a == Candidate("fedcba9876543210", kPinnedTarget, split_schedule()));
  EXPECT_FALSE(a == Candidate("0123456789abcdef", "cpu:other:threads=1", split_schedule()));
}

TEST(Candidate, RecordAndPrinter) {
  Program p = matmul(8, 8, 8);
  Candidate c(workload_key(p), kPinnedTarget, split_schedule());
  EXPECT_EQ(c.workload(), hash_hex(p.structural_hash()));
  CandidateRecord r = c.record();
  EXPECT_EQ(r.hash, c.hash_hex());
  EXPECT_EQ(r.workload_hash, c.workload());
  EXPECT_EQ(r.target, kPinnedTarget);
  EXPECT_EQ(r.schedule_json, split_schedule().to_json());
  EXPECT_EQ(Schedule::from_json(r.schedule_json), c.schedule());
  std::ostringstream text;
  text << c;
  EXPECT_EQ(text.str(), "candidate " + c.hash_hex() + " (workload " + c.workload() + ", target " + kPinnedTarget +
                            ", 1 decisions)");
}

// The random search's sequence (the sampler's draws). Tiny sizes: every tensor fits any cache, so the plan is the same
// on every machine.
std::string config_text(const std::string& fusion, int seed) {
  return "workload:\n  name: mlp\n  params: {batch: 4, in: 16, hidden: 32, out: 16}\nbudget:\n  trials: 8\nseed: " +
         std::to_string(seed) + "\nsearch:\n  strategy: random\n  fusion: " + fusion + "\n";
}

struct Pinned {
  std::string workload_hash;
  std::vector<std::string> candidate_hashes;
};

// The first n candidates of the config's tuning job (tuner/tune_job.h), keyed for kPinnedTarget.
Pinned first_candidates(const std::string& fusion, int seed, int n) {
  TuneJob job = make_tune_job(parse_run_config(config_text(fusion, seed), "pinned.yaml"));
  Pinned out;
  out.workload_hash = workload_key(job.program);
  for (Schedule& s : job.search->propose(n))
    out.candidate_hashes.push_back(Candidate(out.workload_hash, kPinnedTarget, std::move(s)).hash_hex());
  return out;
}

TEST(PinnedCandidates, GlobalFusionSeed1) {
  Pinned p = first_candidates("global", 1, 5);
  EXPECT_EQ(p.workload_hash, "00c277fc62fc5e74");
  EXPECT_EQ(p.candidate_hashes, (std::vector<std::string>{"f1a8be28e51f5583", "121b31f15ccfbd11", "a5e605c6b36eefcd",
                                                          "bbb57b048e52d2c1", "988af823fe086726"}));
}

TEST(PinnedCandidates, UnfusedSeed7) {
  Pinned p = first_candidates("unfused", 7, 5);
  EXPECT_EQ(p.workload_hash, "00c277fc62fc5e74");
  EXPECT_EQ(p.candidate_hashes, (std::vector<std::string>{"419549aebfc7ef12", "382aec9bfb8d6f61", "c3b4ed058b052970",
                                                          "91b09f31200d18cb", "149c32ae69dc8d17"}));
}

}  // namespace
}  // namespace ingot
