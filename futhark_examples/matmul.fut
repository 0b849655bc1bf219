-- Matrix multiplication: the motivating example of incremental flattening (PPoPP'19 §2, thesis Fig. 1.6).
--
-- The datasets form the paper's constant-work family: [2^X][2^(K-2X)] times [2^(K-2X)][2^X], so every
-- dataset does 2^K multiply-adds while the parallelism moves from the inner dot products (small X) to
-- the outer maps (large X). The even X train the tuner; the odd X are held out (notune) to validate it.
-- K is 22 here (4M multiply-adds), small enough for a CPU; generate the data files first with
--   python futhark_examples/gen_matmul_data.py
-- ==
-- entry: main
-- "X0" input @ data/matmul-0.in output @ data/matmul-0.out
-- "X1" notune input @ data/matmul-1.in output @ data/matmul-1.out
-- "X2" input @ data/matmul-2.in output @ data/matmul-2.out
-- "X3" notune input @ data/matmul-3.in output @ data/matmul-3.out
-- "X4" input @ data/matmul-4.in output @ data/matmul-4.out
-- "X5" notune input @ data/matmul-5.in output @ data/matmul-5.out
-- "X6" input @ data/matmul-6.in output @ data/matmul-6.out
-- "X7" notune input @ data/matmul-7.in output @ data/matmul-7.out
-- "X8" input @ data/matmul-8.in output @ data/matmul-8.out
-- "X9" notune input @ data/matmul-9.in output @ data/matmul-9.out
-- "X10" input @ data/matmul-10.in output @ data/matmul-10.out

def dotprod [m] (xs: [m]f32) (ys: [m]f32): f32 =
  reduce (+) 0 (map2 (*) xs ys)

entry main [n][m][p] (xss: [n][m]f32) (yss: [m][p]f32): [n][p]f32 =
  map (\xs -> map (\ys -> dotprod xs ys) (transpose yss)) xss
