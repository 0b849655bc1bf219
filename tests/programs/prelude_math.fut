-- The numeric prelude's bit functions on integers (popc clz ctz mul_hi mad_hi get_bit set_bit, 0 and the
-- extreme values included; a bit index outside the type reads 0 and sets nothing), the special functions on
-- f32 and f64 (acosh asinh atanh gamma lgamma erf erfc, poles included), fma rounded once (compared through
-- to_bits, exactly), mad and lerp, and from_bits/to_bits, get_bit/set_bit on floats.
-- Expected values: Python's integers and math module (tests/programs/prelude_math.fut was generated from them).
-- ==
-- entry: bits_i32
-- input { [0i32, 1i32, -1i32, 12i32, -2147483648i32, 2147483647i32, 96i32, 7i32] [5i32, -1i32, -1i32, 1048576i32, -2147483648i32, 2147483647i32, -3i32, 0i32] [1i32, 2i32, 3i32, -4i32, 5i32, 2147483647i32, 7i32, 8i32] [0i32, 0i32, 31i32, 2i32, 31i32, 30i32, 40i32, -1i32] }
-- output { [0i32, 1i32, 32i32, 2i32, 1i32, 31i32, 2i32, 3i32] [32i32, 31i32, 0i32, 28i32, 0i32, 1i32, 25i32, 29i32] [32i32, 0i32, 0i32, 2i32, 31i32, 0i32, 5i32, 0i32] [0i32, -1i32, 0i32, 0i32, 1073741824i32, 1073741823i32, -1i32, 0i32] [1i32, 1i32, 3i32, -4i32, 1073741829i32, -1073741826i32, 6i32, 8i32] [0i32, 1i32, 1i32, 1i32, 1i32, 1i32, 0i32, 0i32] [1i32, 1i32, -1i32, 12i32, -2147483648i32, 2147483647i32, 96i32, 7i32] [0i32, 0i32, 2147483647i32, 8i32, 0i32, 1073741823i32, 96i32, 7i32] }
-- input { empty([0]i32) empty([0]i32) empty([0]i32) empty([0]i32) }
-- output { empty([0]i32) empty([0]i32) empty([0]i32) empty([0]i32) empty([0]i32) empty([0]i32) empty([0]i32) empty([0]i32) }

entry bits_i32 [n] (xs: [n]i32) (ys: [n]i32) (zs: [n]i32) (bits: [n]i32) =
  (map i32.popc xs, map i32.clz xs, map i32.ctz xs, map2 i32.mul_hi xs ys, map3 i32.mad_hi xs ys zs,
   map2 i32.get_bit bits xs, map2 (\b x -> i32.set_bit b x 1) bits xs, map2 (\b x -> i32.set_bit b x 0) bits xs)

-- ==
-- entry: bits_u8
-- input { [0u8, 1u8, 255u8, 128u8, 12u8, 3u8] [0u8, 255u8, 255u8, 2u8, 200u8, 100u8] [1u8, 2u8, 3u8, 200u8, 255u8, 0u8] [0i32, 7i32, 7i32, 7i32, 2i32, 8i32] }
-- output { [0i32, 1i32, 8i32, 1i32, 2i32, 2i32] [8i32, 7i32, 0i32, 0i32, 4i32, 6i32] [8i32, 0i32, 0i32, 7i32, 2i32, 0i32] [0u8, 0u8, 254u8, 1u8, 9u8, 1u8] [1u8, 2u8, 1u8, 201u8, 8u8, 1u8] [0i32, 0i32, 1i32, 1i32, 1i32, 0i32] [1u8, 129u8, 255u8, 128u8, 12u8, 3u8] [0u8, 1u8, 127u8, 0u8, 8u8, 3u8] }

entry bits_u8 [n] (xs: [n]u8) (ys: [n]u8) (zs: [n]u8) (bits: [n]i32) =
  (map u8.popc xs, map u8.clz xs, map u8.ctz xs, map2 u8.mul_hi xs ys, map3 u8.mad_hi xs ys zs,
   map2 u8.get_bit bits xs, map2 (\b x -> u8.set_bit b x 1) bits xs, map2 (\b x -> u8.set_bit b x 0) bits xs)

-- ==
-- entry: bits_i64
-- input { [0i64, -1i64, 9223372036854775807i64, -9223372036854775808i64, 1099511627776i64, 123456789123i64] [3i64, -1i64, 9223372036854775807i64, -9223372036854775808i64, 1099511627776i64, -987654321987i64] [0i64, 1i64, 2i64, 3i64, 4i64, 5i64] [0i32, 63i32, 62i32, 63i32, 40i32, 64i32] }
-- output { [0i32, 64i32, 63i32, 1i32, 1i32, 19i32] [64i32, 0i32, 1i32, 0i32, 23i32, 27i32] [64i32, 0i32, 0i32, 63i32, 40i32, 0i32] [0i64, 0i64, 4611686018427387903i64, 4611686018427387904i64, 65536i64, -6610i64] [0i64, 1i64, 4611686018427387905i64, 4611686018427387907i64, 65540i64, -6605i64] [0i32, 1i32, 1i32, 1i32, 1i32, 0i32] [1i64, -1i64, 9223372036854775807i64, -9223372036854775808i64, 1099511627776i64, 123456789123i64] [0i64, 9223372036854775807i64, 4611686018427387903i64, 0i64, 0i64, 123456789123i64] }

entry bits_i64 [n] (xs: [n]i64) (ys: [n]i64) (zs: [n]i64) (bits: [n]i32) =
  (map i64.popc xs, map i64.clz xs, map i64.ctz xs, map2 i64.mul_hi xs ys, map3 i64.mad_hi xs ys zs,
   map2 i64.get_bit bits xs, map2 (\b x -> i64.set_bit b x 1) bits xs, map2 (\b x -> i64.set_bit b x 0) bits xs)

-- ==
-- entry: bits_u64
-- input { [0u64, 18446744073709551615u64, 9223372036854775808u64, 4294967296u64, 99u64] [5u64, 18446744073709551615u64, 4u64, 4294967296u64, 18446744073709551609u64] [1u64, 2u64, 3u64, 4u64, 5u64] [0i32, 63i32, 63i32, 31i32, -2i32] }
-- output { [0i32, 64i32, 1i32, 1i32, 4i32] [64i32, 0i32, 0i32, 31i32, 57i32] [64i32, 0i32, 63i32, 32i32, 0i32] [0u64, 18446744073709551614u64, 2u64, 1u64, 98u64] [1u64, 0u64, 5u64, 5u64, 103u64] [0i32, 1i32, 1i32, 0i32, 0i32] [1u64, 18446744073709551615u64, 9223372036854775808u64, 6442450944u64, 99u64] [0u64, 9223372036854775807u64, 0u64, 4294967296u64, 99u64] }

entry bits_u64 [n] (xs: [n]u64) (ys: [n]u64) (zs: [n]u64) (bits: [n]i32) =
  (map u64.popc xs, map u64.clz xs, map u64.ctz xs, map2 u64.mul_hi xs ys, map3 u64.mad_hi xs ys zs,
   map2 u64.get_bit bits xs, map2 (\b x -> u64.set_bit b x 1) bits xs, map2 (\b x -> u64.set_bit b x 0) bits xs)

-- ==
-- entry: bits_i8
-- input { [0i8, -128i8, 127i8, -1i8, 6i8] [9i8, -128i8, 127i8, 2i8, -7i8] [1i8, 2i8, 3i8, 4i8, 5i8] [0i32, 7i32, 6i32, 7i32, 1i32] }
-- output { [0i32, 1i32, 7i32, 8i32, 2i32] [8i32, 0i32, 1i32, 0i32, 5i32] [8i32, 7i32, 0i32, 0i32, 1i32] [0i8, 64i8, 63i8, -1i8, -1i8] [1i8, 66i8, 66i8, 3i8, 4i8] [0i32, 1i32, 1i32, 1i32, 1i32] [1i8, -128i8, 127i8, -1i8, 6i8] [0i8, 0i8, 63i8, 127i8, 4i8] }

entry bits_i8 [n] (xs: [n]i8) (ys: [n]i8) (zs: [n]i8) (bits: [n]i32) =
  (map i8.popc xs, map i8.clz xs, map i8.ctz xs, map2 i8.mul_hi xs ys, map3 i8.mad_hi xs ys zs,
   map2 i8.get_bit bits xs, map2 (\b x -> i8.set_bit b x 1) bits xs, map2 (\b x -> i8.set_bit b x 0) bits xs)

-- ==
-- entry: special_f32
-- input { [1.0f32, 2.0f32, 0.5f32, -1.5f32, 0.0f32, 5.0f32, -1.0f32] }
-- output { [0.0f32, 1.316958f32, f32.nan, f32.nan, f32.nan, 2.2924316f32, f32.nan] [0.8813736f32, 1.4436355f32, 0.4812118f32, -1.1947632f32, 0.0f32, 2.3124382f32, -0.8813736f32] [f32.inf, f32.nan, 0.54930615f32, f32.nan, 0.0f32, f32.nan, -f32.inf] [1.0f32, 1.0f32, 1.7724539f32, 2.3632717f32, f32.inf, 24.0f32, f32.nan] [0.0f32, 0.0f32, 0.5723649f32, 0.86004704f32, f32.inf, 3.1780539f32, f32.inf] [0.8427008f32, 0.9953223f32, 0.5204999f32, -0.96610516f32, 0.0f32, 1.0f32, -0.8427008f32] [0.1572992f32, 0.004677735f32, 0.47950011f32, 1.9661051f32, 1.0f32, 1.5374598e-12f32, 1.8427008f32] }
-- input { empty([0]f32) }
-- output { empty([0]f32) empty([0]f32) empty([0]f32) empty([0]f32) empty([0]f32) empty([0]f32) empty([0]f32) }

entry special_f32 [n] (xs: [n]f32) =
  (map f32.acosh xs, map f32.asinh xs, map f32.atanh xs, map f32.gamma xs, map f32.lgamma xs, map f32.erf xs,
   map f32.erfc xs)

-- ==
-- entry: special_f64
-- input { [1.0f64, 2.0f64, 0.5f64, -1.5f64, 0.0f64, 5.0f64, -1.0f64] }
-- output { [0.0f64, 1.3169578969248166f64, f64.nan, f64.nan, f64.nan, 2.2924316695611777f64, f64.nan] [0.881373587019543f64, 1.4436354751788103f64, 0.48121182505960347f64, -1.1947632172871094f64, 0.0f64, 2.3124383412727525f64, -0.881373587019543f64] [f64.inf, f64.nan, 0.5493061443340548f64, f64.nan, 0.0f64, f64.nan, -f64.inf] [1.0f64, 1.0f64, 1.7724538509055159f64, 2.3632718012073544f64, f64.inf, 24.0f64, f64.nan] [0.0f64, 0.0f64, 0.5723649429247004f64, 0.8600470153764812f64, f64.inf, 3.178053830347945f64, f64.inf] [0.8427007929497149f64, 0.9953222650189527f64, 0.5204998778130465f64, -0.9661051464753108f64, 0.0f64, 0.9999999999984626f64, -0.8427007929497149f64] [0.15729920705028513f64, 0.004677734981047265f64, 0.4795001221869535f64, 1.9661051464753108f64, 1.0f64, 1.5374597944280351e-12f64, 1.842700792949715f64] }
-- input { empty([0]f64) }
-- output { empty([0]f64) empty([0]f64) empty([0]f64) empty([0]f64) empty([0]f64) empty([0]f64) empty([0]f64) }

entry special_f64 [n] (xs: [n]f64) =
  (map f64.acosh xs, map f64.asinh xs, map f64.atanh xs, map f64.gamma xs, map f64.lgamma xs, map f64.erf xs,
   map f64.erfc xs)

-- ==
-- entry: fma_f32
-- input { [1.0002441f32, 1.5f32, 0.0f32, -3.0f32, 1e+20f32] [1.0002441f32, 2.0f32, 5.0f32, 0.1f32, 1e+18f32] [-1.0004883f32, 0.25f32, -0.0f32, 7.0f32, -1e+38f32] }
-- output { [864026624u32, 1078984704u32, 0u32, 1087792742u32, 1916230984u32] }

entry fma_f32 [n] (a: [n]f32) (b: [n]f32) (c: [n]f32): [n]u32 =
  map3 (\x y z -> f32.to_bits (f32.fma x y z)) a b c

-- ==
-- entry: fma_f64
-- input { [1.0000000009313226f64, 0.1f64, 2.0f64] [1.0000000009313226f64, 10.0f64, 3.0f64] [-1.0000000018626451f64, -1.0f64, 1.0f64] }
-- output { [4336966441157787648u64, 4363988038922010624u64, 4619567317775286272u64] }

entry fma_f64 [n] (a: [n]f64) (b: [n]f64) (c: [n]f64): [n]u64 =
  map3 (\x y z -> f64.to_bits (f64.fma x y z)) a b c

-- mad may be fused into an fma by the device, so its cases are exact either way.
-- ==
-- entry: mad_lerp
-- input { [1.5f32, 2.0f32, -3.0f32, 0.0f32] [2.0f32, 0.25f32, 4.0f32, 10.0f32] [0.25f32, 1.0f32, 7.0f32, 0.5f32] }
-- output { [3.25f32, 1.5f32, -5.0f32, 0.5f32] [1.625f32, 0.25f32, 46.0f32, 5.0f32] [0.75f64, -1.0f64] }

entry mad_lerp [n] (a: [n]f32) (b: [n]f32) (c: [n]f32) =
  (map3 f32.mad a b c, map3 f32.lerp a b c, [f64.mad 0.5 0.5 0.5, f64.lerp 1 (-2) (2/3)])

-- Scalars at the top level run on the host (the runtime's prim_call).
-- ==
-- entry: host_scalars
-- input { 12i32 18446744073709551615u64 5.0f64 -1.0f32 }
-- output { 2i32 28i32 2i32 18446744073709551614u64 24.0f64 4617315517961601024u64 1.0f32 1i32 13i32 1i32
--   -3.0f32 3212836864u32 }
-- input { 0i32 0u64 0.0f64 0.0f32 }
-- output { 0i32 32i32 32i32 0u64 f64.inf 0u64 1.0f32 0i32 1i32 0i32 -2.0f32 0u32 }

entry host_scalars (x: i32) (y: u64) (f: f64) (g: f32) =
  (i32.popc x, i32.clz x, i32.ctz x, u64.mul_hi y y, f64.gamma f, f64.to_bits f, f32.from_bits 0x3f800000u32,
   i32.get_bit 3 x, i32.set_bit 0 x 1, f32.get_bit 31 g, f32.set_bit 31 (f32.abs g + 2) 1, f32.to_bits g)
