// How `ingot tune` and `ingot best` print a side-by-side comparison.
#include <cstdio>
#include <sstream>

#include "cli/commands.h"

namespace ingot::cli {

std::string side_by_side_text(const SideBySideComparison& comparison) {
  std::ostringstream out;
  out << "side by side, " << comparison.rounds << " interleaved round" << (comparison.rounds == 1 ? "" : "s")
      << " in one process (run " << comparison.run_id << "):\n";
  int place = 0;
  for (const SideBySideEntry& e : comparison.entries) {
    char line[160];
    const std::string name = e.is_reference ? "fixed schedule" : "#" + std::to_string(++place) + " " + e.candidate_hash;
    if (e.median_seconds)
      std::snprintf(line, sizeof line, "  %-20s %10.4g ms", name.c_str(), *e.median_seconds * 1e3);
    else
      std::snprintf(line, sizeof line, "  %-20s %13s", name.c_str(), "-");
    out << line;
    if (e.speedup) {
      std::snprintf(line, sizeof line, "  %.2fx the fixed schedule", *e.speedup);
      out << line;
      if (e.min_speedup) {
        std::snprintf(line, sizeof line, " (fastest runs %.2fx, faster in %d of %d rounds)", *e.min_speedup,
                      e.faster_rounds, e.paired_rounds);
        out << line;
      }
    }
    if (e.error_class != ErrorClass::kNone)
      out << "  " << to_string(e.error_class) << " in " << comparison.rounds - e.correct_rounds << " round"
          << (comparison.rounds - e.correct_rounds == 1 ? "" : "s") << ": " << e.error_message.substr(0, 80);
    out << "\n";
  }
  if (const std::optional<SideBySideEntry>& naive = comparison.naive) {
    char line[160];
    if (naive->median_seconds)
      std::snprintf(line, sizeof line, "  %-20s %10.4g ms  timed once, after the rounds\n", "naive schedule",
                    *naive->median_seconds * 1e3);
    else
      std::snprintf(line, sizeof line, "  %-20s %13s  %s: %.80s\n", "naive schedule", "-",
                    to_string(naive->error_class).c_str(), naive->error_message.c_str());
    out << line;
  }
  if (const SideBySideEntry* kept = comparison.kept()) {
    out << "kept side by side: "
        << (kept->is_reference ? std::string("the fixed schedule") : "candidate " + kept->candidate_hash);
    if (const std::optional<double> over_naive = comparison.speedup_over_naive(*kept)) {
      char line[64];
      std::snprintf(line, sizeof line, ", %.1fx the naive schedule", *over_naive);
      out << line;
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace ingot::cli
