-- Several entry points in one program, each with its own test block, and a block shared by two entries.
-- ==
-- entry: total total_loop
-- input { [3i32, 1i32, 4i32, 1i32, 5i32] }
-- output { 14i32 }
-- input { empty([0]i32) }
-- output { 0i32 }
-- random input { [100]i32 }
-- auto output

-- ==
-- entry: product
-- input { [3i32, 1i32, 4i32, 1i32, 5i32] }
-- output { 60i32 }

-- ==
-- entry: scaled
-- input { [3i32, 1i32, 4i32, 1i32, 5i32] -2i32 }
-- output { [-6i32, -2i32, -8i32, -2i32, -10i32] }

def sum [n] (xs: [n]i32): i32 = reduce (+) 0 xs

entry total [n] (xs: [n]i32): i32 = sum xs

entry total_loop [n] (xs: [n]i32): i32 = loop acc = 0 for x in xs do acc + x

entry product [n] (xs: [n]i32): i32 = reduce (*) 1 xs

entry scaled [n] (xs: [n]i32) (k: i32): [n]i32 = map (* k) xs
