// A tuning candidate: one schedule of one workload on one target, and the key the database stores it under
// (results/database.h). Its identity is defined here and nowhere else: the key is fnv1a64 (ir/hash.h) of the
// workload's key, the target key and the schedule's canonical JSON, one per line. Databases store these keys, and a
// resumed run finds its measured candidates by them, so the formula must never change
// (tests/tuner/candidate_test.cc pins it).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "ir/program.h"
#include "ir/schedule.h"
#include "results/database.h"

namespace ingot {

// A program's key in the database (WorkloadRecord::hash): its structural hash as 16 hex digits.
std::string workload_key(const Program& program);

class Candidate {
 public:
  // workload: workload_key of the program; target: the key measurements are stored under (cpu_target_key in
  // tuner/tuning_loop.h). Prints the schedule's JSON and hashes it once.
  Candidate(std::string workload, std::string target, Schedule schedule);

  const std::string& workload() const { return workload_; }
  const std::string& target() const { return target_; }
  const Schedule& schedule() const { return schedule_; }
  const std::string& schedule_json() const { return schedule_json_; }  // Schedule::to_json()
  uint64_t hash() const { return hash_; }
  std::string hash_hex() const;  // the database key
  // The database row of this candidate (created_at is left for the database to set).
  CandidateRecord record() const;

  // The same workload, target and schedule, which is the same key.
  bool operator==(const Candidate& other) const;

 private:
  std::string workload_, target_;
  Schedule schedule_;
  std::string schedule_json_;
  uint64_t hash_ = 0;
};

// One line: "candidate <key> (workload <key>, target <key>, <n> decisions)".
std::ostream& operator<<(std::ostream& os, const Candidate& candidate);

}  // namespace ingot
