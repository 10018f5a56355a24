// Runs a fusion strategy: its partition plan (analysis/strategies.h) becomes a schedule whose layout holds the
// plan's kernels and stages and whose fusion decisions (compute_inline, compute_at) realise the plan's vertical
// fusion; every stage left gets the same fixed, reasonable loop schedule, so strategies differ only in fusion.
// Use it to run the four strategies side by side, and as the starting point the search keeps (sampler.h). Its CPU
// choices are knobs with ranges (TemplateKnobs) that a search samples and mutates; the defaults are the fixed schedule.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "analysis/partition_plan.h"
#include "analysis/target.h"
#include "ir/program.h"
#include "ir/schedule.h"

namespace ingot {

// The plan's kernels and stages as a schedule layout: one step per plan stage, a kernel boundary before the
// first stage of every kernel but the first.
StageLayout plan_layout(const PartitionPlan& plan);

// The choices of the fixed CPU loop schedule, as knobs a search may sample and mutate (template_knob_ranges); the
// defaults are the fixed schedule itself. docs/strategies.md ("Knobs") says what each changes and why the default.
struct TemplateKnobs {
  int register_tile = 4;            // rows of a register tile (each axis of a 2-D one), plane and stencil channels
  int gemv_rows = 8;                // rows of a GEMV's register tile (a reduction with one output axis)
  int gate_chunk = 16;              // a 1-D output's split (its parallel loop's chunk), which a gate GEMV follows
  int accumulator_vectors = 0;      // vector registers the accumulators of plane, stencil and channel tiles (and,
                                    // up to lowering's limit, a depthwise band's) may take; 0: 28 with 16 fp32
                                    // lanes (of 32 registers), else 12 (of 16); 0 also lets an AVX2 channel tile of
                                    // one vector take 14 (docs/strategies.md, "Planes")
  int plane_row_share = 0;          // a plane loop holds 1 / share of the accumulators; 0: 4 with 16 lanes, else 2
  int min_stencil_iterations = 64;  // a stencil tile's rows shrink until its parallel loop has this many iterations
  int min_reduction_lanes = 8;      // a contiguous reduction axis along memory this long or longer is vectorized
  bool reuse_operand_order = true;  // the parallel loop visits the reused operand's axes first (weight tiles)
  bool cache_write = true;          // reductions accumulate in a local tile
  bool prefetch = true;             // the layout keeps the plan's prefetches
  bool stencil_tiles = true;        // stencil tiles allowed (else the plain root schedule)
  bool plane_tiles = true;          // plane tiles allowed (else a stencil tile where one applies, or the plain root)
  bool pack_weights = true;         // a GEMM panel's weight (FixedScheduleOptions::weights) is packed once, before
                                    // the runs, panel by panel (else copied per panel, or read in place)
  int panel_vectors = 0;            // vectors of a copied or packed GEMM panel; 0: the tile that fills the most
                                    // accumulators (16 lanes), 3 or 2 (8 lanes)
  bool channel_tiles = true;        // a 1 x 1 convolution with a long reduction and a weight packed by output channel
                                    // vectorizes its output channels, pixels broadcast (else a plane tile)
  int channel_vectors = 0;          // vectors of output channels in a channel tile; 0: the strategy's choice
                                    // (docs/strategies.md, "Planes")
  int band_rows = 16;               // an expansion whose large map only a depthwise convolution reads is computed in
                                    // that convolution's bands of this many output rows (0: stored, as the plan has it)
  bool pad_rows = true;             // a GEMM tile's rows operand whose rows share one L1 set (a multiple of 4 KB apart)
                                    // is stored with a cache line more per row (a pad decision)
  bool channel_blocks = true;       // a channel tile's map along the channels whose readers can all read blocks is
                                    // stored in blocks of a vector of channels, and a depthwise convolution reading it
                                    // runs channels in its lanes (16 with AVX-512, 8 with AVX2; pack decisions)
  bool operator==(const TemplateKnobs&) const = default;
  std::string to_string() const;  // "register_tile=4 gemv_rows=8 ...", every member in declaration order
};

struct FixedScheduleOptions {
  bool gpu = false;           // bind to blockIdx.x / threadIdx.x instead of parallel and vectorized loops
  int max_vector_lanes = 64;  // CPU: the innermost spatial loop is vectorized up to this extent (split when longer);
                              // a knob (template_knob_ranges), kept here where callers have always set it
  int simd_fp32_lanes = 16;   // CPU: fp32 lanes of a vector register (the target's), for register tiles
  int gpu_threads = 256;      // GPU: threads per block at most
  int64_t l2_bytes = 0;       // CPU: one core's L2 cache (the target's); 0: unknown, every operand taken to fit
  bool amx_bf16 = false;      // CPU: the target's AMX bf16 tiles (Target's cpu.amx_bf16)
  TemplateKnobs knobs;        // CPU: the fixed schedule's other choices
  // Placeholders that hold a model's weights (the same values in every run, as ConfiguredWorkload::weights): the
  // schedule may pass them packed (pack decisions). Empty: every input may change between runs, none is packed.
  std::vector<std::string> weights = {};
  bool operator==(const FixedScheduleOptions&) const = default;
};

// A knob and the values a search may give it, the default among them. Booleans are 0 and 1. Every value of every
// range gives a schedule that lowering accepts (tests/space/template_knobs_test.cc checks it on the examples, the
// task workloads and the small paper models under every strategy, on AVX-512 and AVX2 targets).
struct KnobRange {
  std::string name;
  std::vector<int> values;
  int default_value = 0;
};
// max_vector_lanes first, then TemplateKnobs' members in declaration order.
const std::vector<KnobRange>& template_knob_ranges();

// A knob of `options` by its name in template_knob_ranges(); booleans as 0 and 1. Throws std::invalid_argument for
// an unknown name, and set_knob for a value outside the knob's range.
int knob_value(const FixedScheduleOptions& options, const std::string& name);
void set_knob(FixedScheduleOptions& options, const std::string& name, int value);
// "max_vector_lanes=64 register_tile=4 ...": every knob, in template_knob_ranges() order.
std::string knobs_to_string(const FixedScheduleOptions& options);

// `base` with every knob drawn uniformly from its range (gpu, simd_fp32_lanes and gpu_threads kept). The same rng
// state gives the same knobs.
FixedScheduleOptions sample_template_knobs(std::mt19937_64& rng, const FixedScheduleOptions& base = {});
// `options` with exactly one knob, drawn uniformly, changed to another value of its range, drawn uniformly (a knob
// set outside its range changes to any value of it). The same rng state gives the same change.
FixedScheduleOptions mutate_one_knob(const FixedScheduleOptions& options, std::mt19937_64& rng);

// The strategy schedule for a plan of `program` (the plan must be valid for it). A compute whose readers are all
// in its plan stage is fused: inlined when it is not a reduction; on the CPU, a reduction with one reader is
// computed inside that reader's parallel loop (compute_at). Two kinds stay stored: a compute that does arithmetic
// and that a reader reads more often than it has elements (a broadcast, a GEMM operand), and data movement whose
// folding would leave a reduction loading through a non-affine index. Every other compute is a root stage: CPU:
// outer spatial loops fused and parallel, reduction loops, then the innermost spatial loop vectorized (split when
// longer than max_vector_lanes); reductions accumulate in a local tile (cache_write); a reduction along memory
// (analysis/access.h) with a contiguous innermost reduction axis of min_reduction_lanes (8) or more vectorizes that
// axis instead (a simd reduction) around a register tile of up to register_tile (4) outputs, gemv_rows (8) for a
// GEMV, or else unrolls its spatial tile; the parallel loop that hosts it visits its largest operand's axes first
// (weight tiles reused across activation rows); convolutions take plane or stencil tiles (docs/strategies.md). The
// numbers are the knobs' defaults. GPU: spatial axes split into a block loop and a thread loop of at most
// gpu_threads (the knobs other than prefetch do not apply).
Schedule strategy_schedule(const Program& program, const PartitionPlan& plan, const FixedScheduleOptions& options = {});

// `options` with what a CPU target decides of its fixed schedules: its fp32 lanes (where it has them), one core's L2
// and AMX bf16. Unchanged for a GPU target. Every caller that schedules for a target goes through here, so that a
// job's starting schedule and its tests' expectations agree on every CPU.
FixedScheduleOptions fixed_options_for_target(FixedScheduleOptions options, const Target& target);

// make_plan (analysis/strategies.h) then strategy_schedule with fixed_options_for_target: throws std::invalid_argument
// for an unknown strategy.
struct StrategyProgram {
  PartitionPlan plan;
  Schedule schedule;
};
StrategyProgram make_strategy_program(const Program& program, const std::string& strategy, const Target& target,
                                      const FixedScheduleOptions& options = {});

}  // namespace ingot
