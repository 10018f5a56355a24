#include "workloads/onnx_tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "workloads/onnx_import.h"

namespace ingot {
namespace {

using ::testing::HasSubstr;

HostTensor sample(DType dtype, const std::vector<int64_t>& shape) {
  HostTensor t(dtype, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, dtype == DType::kBool ? double(i % 2) : double(i) - 2.5);
  return t;
}

bool same_bytes(const HostTensor& a, const HostTensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.num_bytes()) == 0;
}

TEST(OnnxTensor, RoundTripsEveryDtypeThroughRawDataAndTypedFields) {
  for (DType dtype : {DType::kFloat32, DType::kInt64, DType::kInt32, DType::kBool, DType::kFloat16, DType::kBFloat16})
    for (bool typed : {false, true}) {
      HostTensor t = sample(dtype, {2, 3});
      onnx::TensorProto p = tensor_to_onnx(t, "w", typed);
      EXPECT_EQ(p.name(), "w");
      EXPECT_EQ(p.has_raw_data(), !typed) << dtype_name(dtype);
      EXPECT_TRUE(same_bytes(tensor_from_onnx(p), t)) << dtype_name(dtype) << " typed " << typed;
    }
}

TEST(OnnxTensor, ReadsFloatDataWrittenByHand) {
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(3);
  for (float v : {1.5f, -2.0f, 0.25f}) p.add_float_data(v);
  HostTensor t = tensor_from_onnx(p);
  ASSERT_EQ(t.shape(), std::vector<int64_t>{3});
  EXPECT_EQ(t.f32()[0], 1.5f);
  EXPECT_EQ(t.f32()[2], 0.25f);
  // A scalar: no dims, one value.
  onnx::TensorProto s;
  s.set_data_type(onnx::TensorProto::INT64);
  s.add_int64_data(-7);
  HostTensor scalar = tensor_from_onnx(s);
  EXPECT_TRUE(scalar.shape().empty());
  EXPECT_EQ(scalar.i64()[0], -7);
}

TEST(OnnxTensor, RejectsWrongCountsAndUnsupportedTypes) {
  onnx::TensorProto p;
  p.set_name("bad");
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(4);
  p.add_float_data(1);
  try {
    tensor_from_onnx(p);
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("tensor 'bad' of shape [4] needs 4 values but float_data holds 1"));
  }
  onnx::TensorProto d;
  d.set_name("dbl");
  d.set_data_type(onnx::TensorProto::DOUBLE);
  d.add_double_data(1.0);
  EXPECT_THROW(tensor_from_onnx(d), OnnxUnsupportedError);
  onnx::TensorProto ext = tensor_to_onnx(sample(DType::kFloat32, {2}), "ext");
  ext.set_data_location(onnx::TensorProto::EXTERNAL);
  EXPECT_THROW(tensor_from_onnx(ext), OnnxUnsupportedError);
}

TEST(OnnxTensor, FilesRoundTripAndMissingFilesThrow) {
  std::filesystem::path path = std::filesystem::temp_directory_path() / "ingot_onnx_tensor_test.pb";
  HostTensor t = sample(DType::kFloat32, {2, 2});
  write_tensor_proto_file(tensor_to_onnx(t, "x"), path.string());
  EXPECT_TRUE(same_bytes(tensor_from_onnx(read_tensor_proto_file(path.string())), t));
  std::filesystem::remove(path);
  EXPECT_THROW(read_tensor_proto_file(path.string()), std::runtime_error);
}

}  // namespace
}  // namespace ingot
