#include "tuner/candidate.h"

#include "ir/hash.h"

namespace ingot {

std::string workload_key(const Program& program) { return hash_hex(program.structural_hash()); }

Candidate::Candidate(std::string workload, std::string target, Schedule schedule)
    : workload_(std::move(workload)),
      target_(std::move(target)),
      schedule_(std::move(schedule)),
      schedule_json_(schedule_.to_json()),
      hash_(fnv1a64(workload_ + "\n" + target_ + "\n" + schedule_json_)) {}

std::string Candidate::hash_hex() const { return ::ingot::hash_hex(hash_); }

CandidateRecord Candidate::record() const {
  return CandidateRecord{hash_hex(), workload_, target_, schedule_json_, ""};
}

bool Candidate::operator==(const Candidate& other) const {
  return hash_ == other.hash_ && workload_ == other.workload_ && target_ == other.target_ &&
         schedule_json_ == other.schedule_json_;
}

std::ostream& operator<<(std::ostream& os, const Candidate& candidate) {
  return os << "candidate " << candidate.hash_hex() << " (workload " << candidate.workload() << ", target "
            << candidate.target() << ", " << candidate.schedule().decisions().size() << " decisions)";
}

}  // namespace ingot
