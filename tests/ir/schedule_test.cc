#include "ir/schedule.h"

#include <gtest/gtest.h>

namespace ingot {
namespace {

Schedule every_kind() {
  Schedule s;
  s.split("C", "i", 32)
      .split("C", "j", 7, SplitTail::kGuard)
      .split("C", "i.i", 6, SplitTail::kShift)
      .reorder("C", {"i.o", "j.o", "k", "i.i", "j.i"})
      .fuse("C", "i.o", "j.o")
      .parallel("C", "i.o+j.o")
      .vectorize("C", "j.i")
      .unroll("C", "k")
      .bind("C", "i.i", LoopKind::kThreadX)
      .compute_at("P", "C", "i.o+j.o")
      .compute_inline("Q")
      .cache_write("C", "i.o+j.o")
      .cache_read("C", "B", MemoryScope::kShared, "k")
      .explicit_vectors("C", "k", 16)
      .pack("W", 1, 48)
      .pad("H", 1, 16);
  return s;
}

void expect_json_error(const std::string& text, const std::string& fragment) {
  try {
    Schedule::from_json(text);
    FAIL() << "expected an error for " << text;
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Schedule, CanonicalJsonIsStableAndSorted) {
  Schedule s;
  s.split("C", "i", 32).cache_read("C", "B", MemoryScope::kShared, "k");
  EXPECT_EQ(s.to_json(), R"({"decisions":[{"axis":"i","factor":32,"kind":"split","stage":"C","tail":"exact"},)"
                         R"({"axis":"k","kind":"cache_read","scope":"shared","stage":"C","tensor":"B"}],"version":1})");
}

TEST(Schedule, ExplicitVectorsJsonNamesItsLanes) {
  Schedule s;
  s.explicit_vectors("C", "k", 16);
  EXPECT_EQ(s.to_json(),
            R"({"decisions":[{"axis":"k","kind":"explicit_vectors","lanes":16,"stage":"C"}],"version":1})");
  EXPECT_EQ(s.decisions()[0].to_string(), "explicit_vectors C [k] of 16 lanes");
  expect_json_error(R"({"decisions":[{"axis":"k","kind":"explicit_vectors","stage":"C"}],"version":1})",
                    "schedule decision #0: key \"lanes\" must be an integer");
}

TEST(Schedule, PackJsonNamesItsDimensionAndBlock) {
  Schedule s;
  s.pack("W", 0, 48);
  EXPECT_EQ(s.to_json(), R"({"decisions":[{"block":48,"dim":0,"kind":"pack","stage":"W"}],"version":1})");
  EXPECT_EQ(s.decisions()[0].to_string(), "pack W dimension 0 in blocks of 48");
  EXPECT_NE(Schedule().pack("W", 1, 48).hash(), s.hash());
  expect_json_error(R"({"decisions":[{"dim":0,"kind":"pack","stage":"W"}],"version":1})",
                    "schedule decision #0: key \"block\" must be an integer");
}

TEST(Schedule, PadJsonNamesItsDimensionAndElements) {
  Schedule s;
  s.pad("H", 1, 16);
  EXPECT_EQ(s.to_json(), R"({"decisions":[{"dim":1,"elements":16,"kind":"pad","stage":"H"}],"version":1})");
  EXPECT_EQ(s.decisions()[0].to_string(), "pad H dimension 1 by 16 elements");
  EXPECT_NE(Schedule().pad("H", 1, 8).hash(), s.hash());
  expect_json_error(R"({"decisions":[{"dim":1,"kind":"pad","stage":"H"}],"version":1})",
                    "schedule decision #0: key \"elements\" must be an integer");
}

TEST(Schedule, JsonRoundTripsEveryDecisionKind) {
  Schedule s = every_kind();
  Schedule back = Schedule::from_json(s.to_json());
  EXPECT_EQ(back, s);
  EXPECT_EQ(back.to_json(), s.to_json());
  EXPECT_EQ(back.hash(), s.hash());
}

// A layout's JSON names a step's prefetches only when it has some: schedules stored before prefetches existed
// keep their text and hash.
TEST(Schedule, LayoutJsonCarriesPrefetchesOnlyWhereThereAreSome) {
  Schedule s;
  s.set_layout({LayoutStep{{"A"}, false, false}, LayoutStep{{"B", "C"}, true, false, {"W2", "b2"}}});
  EXPECT_EQ(s.to_json(),
            R"({"decisions":[],"layout":[{"barrier":false,"computes":["A"],"kernel":false},)"
            R"({"barrier":true,"computes":["B","C"],"kernel":false,"prefetch":["W2","b2"]}],"version":1})");
  Schedule back = Schedule::from_json(s.to_json());
  EXPECT_EQ(back, s);
  EXPECT_EQ(back.layout()[1].prefetch, (std::vector<std::string>{"W2", "b2"}));
  Schedule without = s;
  without.set_layout({LayoutStep{{"A"}, false, false}, LayoutStep{{"B", "C"}, true, false}});
  EXPECT_NE(without.hash(), s.hash());
  expect_json_error(R"({"decisions":[],"layout":[{"barrier":false,"computes":["A"],"kernel":false,"prefetch":"W"}],)"
                    R"("version":1})",
                    "layout step #0: \"prefetch\" must be a list");
  expect_json_error(R"({"decisions":[],"layout":[{"barrier":false,"computes":["A"],"kernel":false,"prefetch":[1]}],)"
                    R"("version":1})",
                    "layout step #0: \"prefetch\" must hold strings");
}

TEST(Schedule, HashChangesWithAnyDecision) {
  Schedule a, b;
  a.split("C", "i", 32);
  b.split("C", "i", 16);
  EXPECT_NE(a.hash(), b.hash());
  Schedule guarded, shifted;
  guarded.split("C", "i", 24, SplitTail::kGuard);
  shifted.split("C", "i", 24, SplitTail::kShift);
  EXPECT_NE(guarded.hash(), shifted.hash());
  EXPECT_EQ(shifted.decisions()[0].to_string(), "split C [i] by 24 (shifted tail)");
}

TEST(Schedule, MalformedJsonNamesTheProblem) {
  expect_json_error("{", "does not parse");
  expect_json_error(R"({"decisions":[],"version":2})", "unsupported version");
  expect_json_error(R"({"decisions":[{"kind":"spin","stage":"C"}],"version":1})", "unknown decision kind 'spin'");
  expect_json_error(R"({"decisions":[{"kind":"split","stage":"C","axis":"i","tail":"exact"}],"version":1})",
                    "decision #0: key \"factor\" must be an integer");
  expect_json_error(R"({"decisions":[{"kind":"split","stage":"C","axis":"i","factor":4,"tail":"wrap"}],"version":1})",
                    "decision #0: \"tail\" must be exact, guard or shift");
  expect_json_error(R"({"decisions":[{"kind":"bind","stage":"C","axis":"i","thread":"warp"}],"version":1})",
                    "unknown loop kind 'warp'");
  expect_json_error(R"({"decisions":[{"kind":"fuse","stage":"C","axes":"i"}],"version":1})", "\"axes\" must be a list");
}

}  // namespace
}  // namespace ingot
