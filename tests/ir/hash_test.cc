#include "ir/hash.h"

#include <gtest/gtest.h>

namespace ingot {
namespace {

// Stored keys (databases, kernel caches) depend on these exact values, offset basis included (ir/hash.h).
TEST(Hash, Fnv1a64KeepsItsValues) {
  EXPECT_EQ(fnv1a64(""), 0x14650fb0739d0383ull);
  EXPECT_EQ(fnv1a64("a"), 0x44bd8ad473cd9906ull);
  EXPECT_EQ(fnv1a64("foobar"), 0x88fad7c0a8ff07f2ull);
}

TEST(Hash, HexIsSixteenLowercaseDigits) {
  EXPECT_EQ(hash_hex(0), "0000000000000000");
  EXPECT_EQ(hash_hex(0x14650fb0739d0383ull), "14650fb0739d0383");
  EXPECT_EQ(hash_hex(~0ull), "ffffffffffffffff");
}

}  // namespace
}  // namespace ingot
