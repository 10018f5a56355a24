#include "lower/vector_maps.h"

#include <optional>

#include "ir/functor.h"
#include "ir/simplify.h"
#include "lower/vector_tiles.h"

namespace ingot {

namespace {

constexpr int64_t kMaxStoreStep = int64_t(1) << 24;

// Whether e, which moves with `lanes`, is made of what an explicit vector map prints (vector_map); collects its
// moving loads and notes a moving exp, sigmoid or tanh.
bool mappable(const Expr& e, const std::string& lanes, const StoreNode* store, VectorMap& map, bool& calls) {
  if (!uses_var(e, lanes)) return true;  // printed as a scalar, which the vector arithmetic broadcasts
  if (e.dtype() != DType::kFloat32) return false;
  switch (e.kind()) {
    case ExprKind::kBufferLoad: {
      auto* load = e.as<BufferLoadNode>();
      if (lane_step(load->index, lanes) != 1) return false;
      if (load->buffer->name == store->buffer->name && !structural_equal(load->index, store->index)) return false;
      for (const Expr& known : map.lane_loads)
        if (structural_equal(known, e)) return true;
      map.lane_loads.push_back(e);
      return true;
    }
    case ExprKind::kBinary: {
      auto* b = e.as<BinaryNode>();
      if (b->op == BinaryOp::kMod) return false;
      return mappable(b->a, lanes, store, map, calls) && mappable(b->b, lanes, store, map, calls);
    }
    case ExprKind::kCall: {
      auto* c = e.as<CallNode>();
      if (c->func != MathFunc::kExp && c->func != MathFunc::kSigmoid && c->func != MathFunc::kTanh) return false;
      calls = true;
      return mappable(c->args[0], lanes, store, map, calls);
    }
    default: return false;
  }
}

}  // namespace

std::optional<VectorMap> vector_map(const ForNode* loop) {
  if (loop->loop_kind != LoopKind::kVectorized || loop->explicit_lanes > 0) return std::nullopt;
  Stmt body = single_statement(loop->body);
  Expr guard;
  if (auto* condition = as<IfThenElseNode>(body);
      condition && !condition->else_case && !uses_var(condition->cond, loop->name())) {
    guard = condition->cond;
    body = single_statement(condition->then_case);
  }
  auto* store = as<StoreNode>(body);
  if (!store || store->buffer->dtype != DType::kFloat32) return std::nullopt;
  const int64_t store_step = lane_step(store->index, loop->name());
  // A scatter's lane offsets are 32-bit.
  if (store_step < 1 || store_step > kMaxStoreStep) return std::nullopt;
  VectorMap map{store, {}, guard, store_step};
  bool calls = false;
  if (!mappable(store->value, loop->name(), store, map, calls) || !calls) return std::nullopt;
  return map;
}

std::optional<PairMap> pair_map(const ForNode* loop) {
  if (loop->loop_kind != LoopKind::kVectorized || loop->explicit_lanes > 0) return std::nullopt;
  auto* pair_loop = as<ForNode>(single_statement(loop->body));
  if (!pair_loop || pair_loop->extent != 2 || is_gpu_thread(pair_loop->loop_kind)) return std::nullopt;
  auto* store = as<StoreNode>(single_statement(pair_loop->body));
  if (!store || store->buffer->dtype != DType::kBFloat16 || lane_step(store->index, loop->name()) != 2 ||
      lane_step(store->index, pair_loop->name()) != 1)
    return std::nullopt;
  auto* rounded = store->value.as<CastNode>();
  if (!rounded || rounded->dtype != DType::kBFloat16 || rounded->value.dtype() != DType::kFloat32) return std::nullopt;
  PairMap map{store, pair_loop, {}};
  auto moving_load = [&](const Expr& e) {
    auto* load = e.as<BufferLoadNode>();
    return load && load->dtype == DType::kFloat32 && lane_step(load->index, loop->name()) == 1;
  };
  for (int64_t n = 0; n < 2; ++n) {
    Expr value = simplify(substitute(rounded->value, {{pair_loop->name(), Expr(n)}}));
    bool mappable = moving_load(value);
    if (auto* choice = value.as<SelectNode>()) {
      const int64_t* zero = as_const_int(choice->false_value);
      auto* zero_f = choice->false_value.as<FloatImmNode>();
      mappable = !uses_var(choice->cond, loop->name()) && moving_load(choice->true_value) &&
                 ((zero_f && zero_f->value == 0.0) || (zero && *zero == 0));
    }
    if (!mappable) return std::nullopt;
    map.values.push_back(value);
  }
  return map;
}

}  // namespace ingot
