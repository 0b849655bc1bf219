-- A parametric module applied to an application of itself (futhark-benchmarks' poseidon, through
-- github.com/athas/vector's `cat_vector`): `four.len` uses `two.len`, elaborated from the same text, which is no
-- recursion.
-- ==
-- input { 1i64 } output { 4i64 [1i64, 1i64, 1i64, 1i64] }

module one = { def len = 1i64 def iota = [0i64] }

module cat (X: { val len : i64 val iota : [len]i64 }) (Y: { val len : i64 val iota : [len]i64 }) = {
  def len = X.len + Y.len
  def iota = X.iota ++ Y.iota
}

module two = cat one one
module four = cat two two

entry main (x: i64) = (four.len, map (+ x) four.iota)
