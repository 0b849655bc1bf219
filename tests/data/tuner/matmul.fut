-- Matrix multiplication: the tuner tests run tests/fake_program.py in place of its compiled form. The
-- fake program reads only the sizes n m p, so the datasets hold just those.
-- ==
-- entry: main
-- "rows" input { 65536i64 64i64 64i64 }
-- input { 1024i64 64i64
--         1024i64 }
-- input @ data/dots.in
-- "small-dots" input { 64i64 256i64 32i64 } output { 352i64 }
-- input { 16i64 64i64 64i64 }
-- compiled input @ data/wide.in
-- input { 256i64 16i64 256i64 }
-- "held-rows" notune input { 32768i64 32i64 32i64 }
-- "held-dots" notune input @ data/held-dots.in

def main [n][m][p] (xss: [n][m]f32) (yss: [m][p]f32) : [n][p]f32 =
  map (\xs -> map (\ys -> f32.sum (map2 (*) xs ys)) (transpose yss)) xss
