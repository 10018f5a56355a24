#include "ir/schedule.h"

#include <nlohmann/json.hpp>
#include <sstream>

namespace ingot {

namespace {

constexpr DecisionKind kAllKinds[] = {
    DecisionKind::kSplit,         DecisionKind::kReorder,    DecisionKind::kFuse,      DecisionKind::kParallel,
    DecisionKind::kVectorize,     DecisionKind::kUnroll,     DecisionKind::kBind,      DecisionKind::kComputeAt,
    DecisionKind::kComputeInline, DecisionKind::kCacheWrite, DecisionKind::kCacheRead, DecisionKind::kExplicitVectors,
    DecisionKind::kPack,          DecisionKind::kBatch,      DecisionKind::kPad};

DecisionKind parse_kind(const std::string& name) {
  for (DecisionKind k : kAllKinds)
    if (name == decision_kind_name(k)) return k;
  throw ScheduleError("unknown decision kind '" + name + "'");
}

bool takes_one_axis(DecisionKind k) {
  return k != DecisionKind::kReorder && k != DecisionKind::kFuse && k != DecisionKind::kComputeInline &&
         k != DecisionKind::kPack && k != DecisionKind::kBatch && k != DecisionKind::kPad;
}

}  // namespace

Decision make_decision(DecisionKind kind, const std::string& stage, std::vector<std::string> axes) {
  Decision d;
  d.kind = kind;
  d.stage = stage;
  d.axes = std::move(axes);
  return d;
}

const char* decision_kind_name(DecisionKind k) {
  switch (k) {
    case DecisionKind::kSplit: return "split";
    case DecisionKind::kReorder: return "reorder";
    case DecisionKind::kFuse: return "fuse";
    case DecisionKind::kParallel: return "parallel";
    case DecisionKind::kVectorize: return "vectorize";
    case DecisionKind::kUnroll: return "unroll";
    case DecisionKind::kBind: return "bind";
    case DecisionKind::kComputeAt: return "compute_at";
    case DecisionKind::kComputeInline: return "compute_inline";
    case DecisionKind::kCacheWrite: return "cache_write";
    case DecisionKind::kCacheRead: return "cache_read";
    case DecisionKind::kExplicitVectors: return "explicit_vectors";
    case DecisionKind::kPack: return "pack";
    case DecisionKind::kBatch: return "batch";
    case DecisionKind::kPad: return "pad";
  }
  return "?";
}

const char* split_tail_name(SplitTail t) {
  switch (t) {
    case SplitTail::kExact: return "exact";
    case SplitTail::kGuard: return "guard";
    case SplitTail::kShift: return "shift";
  }
  return "?";
}

bool Decision::operator==(const Decision& o) const {
  return kind == o.kind && stage == o.stage && axes == o.axes && factor == o.factor && tail == o.tail &&
         target == o.target && tensor == o.tensor && scope == o.scope && bind == o.bind && dim == o.dim;
}

std::string Decision::to_string() const {
  std::ostringstream os;
  os << decision_kind_name(kind) << " " << stage;
  if (!axes.empty()) {
    os << " [";
    for (size_t i = 0; i < axes.size(); ++i) os << (i ? ", " : "") << axes[i];
    os << "]";
  }
  switch (kind) {
    case DecisionKind::kSplit:
      os << " by " << factor
         << (tail == SplitTail::kGuard   ? " (guarded tail)"
             : tail == SplitTail::kShift ? " (shifted tail)"
                                         : "");
      break;
    case DecisionKind::kBind: os << " to " << loop_kind_name(bind); break;
    case DecisionKind::kComputeAt: os << " at " << target; break;
    case DecisionKind::kCacheRead: os << " reading " << tensor << " into " << memory_scope_name(scope); break;
    case DecisionKind::kExplicitVectors: os << " of " << factor << " lanes"; break;
    case DecisionKind::kPack: os << " dimension " << dim << " in blocks of " << factor; break;
    case DecisionKind::kBatch: os << " stacking " << tensor; break;
    case DecisionKind::kPad: os << " dimension " << dim << " by " << factor << " elements"; break;
    default: break;
  }
  return os.str();
}

Schedule& Schedule::split(const std::string& stage, const std::string& axis, int64_t factor, SplitTail tail) {
  Decision d = make_decision(DecisionKind::kSplit, stage, {axis});
  d.factor = factor;
  d.tail = tail;
  append(d);
  return *this;
}
Schedule& Schedule::reorder(const std::string& stage, std::vector<std::string> order) {
  append(make_decision(DecisionKind::kReorder, stage, std::move(order)));
  return *this;
}
Schedule& Schedule::fuse(const std::string& stage, const std::string& outer, const std::string& inner) {
  append(make_decision(DecisionKind::kFuse, stage, {outer, inner}));
  return *this;
}
Schedule& Schedule::parallel(const std::string& stage, const std::string& axis) {
  append(make_decision(DecisionKind::kParallel, stage, {axis}));
  return *this;
}
Schedule& Schedule::vectorize(const std::string& stage, const std::string& axis) {
  append(make_decision(DecisionKind::kVectorize, stage, {axis}));
  return *this;
}
Schedule& Schedule::unroll(const std::string& stage, const std::string& axis) {
  append(make_decision(DecisionKind::kUnroll, stage, {axis}));
  return *this;
}
Schedule& Schedule::bind(const std::string& stage, const std::string& axis, LoopKind kind) {
  Decision d = make_decision(DecisionKind::kBind, stage, {axis});
  d.bind = kind;
  append(d);
  return *this;
}
Schedule& Schedule::compute_at(const std::string& stage, const std::string& reader, const std::string& axis) {
  Decision d = make_decision(DecisionKind::kComputeAt, stage, {axis});
  d.target = reader;
  append(d);
  return *this;
}
Schedule& Schedule::batch(const std::string& batched, std::vector<std::string> members, const std::string& stacked) {
  Decision d = make_decision(DecisionKind::kBatch, batched, std::move(members));
  d.tensor = stacked;
  append(d);
  return *this;
}
Schedule& Schedule::compute_inline(const std::string& stage) {
  append(make_decision(DecisionKind::kComputeInline, stage, {}));
  return *this;
}
Schedule& Schedule::cache_write(const std::string& stage, const std::string& axis) {
  append(make_decision(DecisionKind::kCacheWrite, stage, {axis}));
  return *this;
}
Schedule& Schedule::explicit_vectors(const std::string& stage, const std::string& axis, int64_t lanes) {
  Decision d = make_decision(DecisionKind::kExplicitVectors, stage, {axis});
  d.factor = lanes;
  append(d);
  return *this;
}
Schedule& Schedule::cache_read(const std::string& stage, const std::string& tensor, MemoryScope scope,
                               const std::string& axis) {
  Decision d = make_decision(DecisionKind::kCacheRead, stage, {axis});
  d.tensor = tensor;
  d.scope = scope;
  append(d);
  return *this;
}

Schedule& Schedule::pack(const std::string& tensor, int64_t dim, int64_t block) {
  Decision d = make_decision(DecisionKind::kPack, tensor, {});
  d.dim = dim;
  d.factor = block;
  append(d);
  return *this;
}

Schedule& Schedule::pad(const std::string& stage, int64_t dim, int64_t elements) {
  Decision d = make_decision(DecisionKind::kPad, stage, {});
  d.dim = dim;
  d.factor = elements;
  append(d);
  return *this;
}

std::string Schedule::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const Decision& d : decisions_) {
    nlohmann::json j;
    j["kind"] = decision_kind_name(d.kind);
    j["stage"] = d.stage;
    if (takes_one_axis(d.kind))
      j["axis"] = d.axes.empty() ? "" : d.axes[0];
    else if (d.kind != DecisionKind::kComputeInline && d.kind != DecisionKind::kPack && d.kind != DecisionKind::kPad)
      j["axes"] = d.axes;
    switch (d.kind) {
      case DecisionKind::kSplit:
        j["factor"] = d.factor;
        j["tail"] = split_tail_name(d.tail);
        break;
      case DecisionKind::kBind: j["thread"] = loop_kind_name(d.bind); break;
      case DecisionKind::kComputeAt: j["target"] = d.target; break;
      case DecisionKind::kCacheRead:
        j["tensor"] = d.tensor;
        j["scope"] = memory_scope_name(d.scope);
        break;
      case DecisionKind::kExplicitVectors: j["lanes"] = d.factor; break;
      case DecisionKind::kPack:
        j["dim"] = d.dim;
        j["block"] = d.factor;
        break;
      case DecisionKind::kBatch: j["tensor"] = d.tensor; break;
      case DecisionKind::kPad:
        j["dim"] = d.dim;
        j["elements"] = d.factor;
        break;
      default: break;
    }
    list.push_back(std::move(j));
  }
  nlohmann::json root;
  root["version"] = 1;
  root["decisions"] = std::move(list);
  if (!layout_.empty()) {
    nlohmann::json steps = nlohmann::json::array();
    for (const LayoutStep& step : layout_) {
      nlohmann::json j = {
          {"computes", step.computes}, {"barrier", step.barrier_before}, {"kernel", step.kernel_before}};
      if (!step.prefetch.empty()) j["prefetch"] = step.prefetch;  // absent otherwise: older schedules keep their text
      steps.push_back(std::move(j));
    }
    root["layout"] = std::move(steps);
  }
  return root.dump();
}

Schedule Schedule::from_json(const std::string& text) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ScheduleError(std::string("schedule JSON does not parse: ") + e.what());
  }
  if (!root.is_object() || !root.contains("decisions") || !root["decisions"].is_array())
    throw ScheduleError("schedule JSON needs an object with a \"decisions\" array");
  if (root.value("version", 0) != 1) throw ScheduleError("schedule JSON has an unsupported version (expected 1)");
  Schedule s;
  const auto& list = root["decisions"];
  for (size_t n = 0; n < list.size(); ++n) {
    const auto& j = list[n];
    std::string where = "schedule decision #" + std::to_string(n);
    auto str = [&](const char* key) -> std::string {
      if (!j.contains(key) || !j[key].is_string())
        throw ScheduleError(where + ": key \"" + key + "\" must be a string");
      return j[key].get<std::string>();
    };
    if (!j.is_object()) throw ScheduleError(where + " is not an object");
    Decision d;
    try {
      d.kind = parse_kind(str("kind"));
      d.stage = str("stage");
      if (takes_one_axis(d.kind)) {
        d.axes = {str("axis")};
      } else if (d.kind != DecisionKind::kComputeInline && d.kind != DecisionKind::kPack &&
                 d.kind != DecisionKind::kPad) {
        if (!j.contains("axes") || !j["axes"].is_array()) throw ScheduleError(where + ": key \"axes\" must be a list");
        for (const auto& a : j["axes"]) {
          if (!a.is_string()) throw ScheduleError(where + ": \"axes\" must hold strings");
          d.axes.push_back(a.get<std::string>());
        }
      }
      switch (d.kind) {
        case DecisionKind::kSplit: {
          if (!j.contains("factor") || !j["factor"].is_number_integer())
            throw ScheduleError(where + ": key \"factor\" must be an integer");
          d.factor = j["factor"].get<int64_t>();
          std::string tail = str("tail");
          if (tail == "guard")
            d.tail = SplitTail::kGuard;
          else if (tail == "shift")
            d.tail = SplitTail::kShift;
          else if (tail != "exact")
            throw ScheduleError(where + ": \"tail\" must be exact, guard or shift");
          break;
        }
        case DecisionKind::kBind: d.bind = parse_loop_kind(str("thread")); break;
        case DecisionKind::kComputeAt: d.target = str("target"); break;
        case DecisionKind::kCacheRead:
          d.tensor = str("tensor");
          d.scope = parse_memory_scope(str("scope"));
          break;
        case DecisionKind::kBatch: d.tensor = str("tensor"); break;
        case DecisionKind::kExplicitVectors:
          if (!j.contains("lanes") || !j["lanes"].is_number_integer())
            throw ScheduleError(where + ": key \"lanes\" must be an integer");
          d.factor = j["lanes"].get<int64_t>();
          break;
        case DecisionKind::kPack:
        case DecisionKind::kPad:
          for (auto [key, field] :
               {std::pair{"dim", &d.dim}, std::pair{d.kind == DecisionKind::kPack ? "block" : "elements", &d.factor}}) {
            if (!j.contains(key) || !j[key].is_number_integer())
              throw ScheduleError(where + ": key \"" + key + "\" must be an integer");
            *field = j[key].get<int64_t>();
          }
          break;
        default: break;
      }
    } catch (const std::invalid_argument& e) {
      throw ScheduleError(where + ": " + e.what());
    }
    s.append(std::move(d));
  }
  if (root.contains("layout")) {
    if (!root["layout"].is_array()) throw ScheduleError("schedule JSON: \"layout\" must be a list of steps");
    StageLayout layout;
    for (size_t n = 0; n < root["layout"].size(); ++n) {
      const auto& j = root["layout"][n];
      std::string where = "schedule layout step #" + std::to_string(n);
      if (!j.is_object() || !j.contains("computes") || !j["computes"].is_array())
        throw ScheduleError(where + ": needs an object with a \"computes\" list");
      LayoutStep step;
      for (const auto& c : j["computes"]) {
        if (!c.is_string()) throw ScheduleError(where + ": \"computes\" must hold strings");
        step.computes.push_back(c.get<std::string>());
      }
      for (auto [key, flag] : {std::pair{"barrier", &step.barrier_before}, std::pair{"kernel", &step.kernel_before}}) {
        if (!j.contains(key) || !j[key].is_boolean())
          throw ScheduleError(where + ": key \"" + key + "\" must be true or false");
        *flag = j[key].get<bool>();
      }
      if (j.contains("prefetch")) {
        if (!j["prefetch"].is_array()) throw ScheduleError(where + ": \"prefetch\" must be a list");
        for (const auto& t : j["prefetch"]) {
          if (!t.is_string()) throw ScheduleError(where + ": \"prefetch\" must hold strings");
          step.prefetch.push_back(t.get<std::string>());
        }
      }
      layout.push_back(std::move(step));
    }
    s.set_layout(std::move(layout));
  }
  return s;
}

}  // namespace ingot
