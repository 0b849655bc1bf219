-- Modules, elaborated away before the checker (ir/frontend/modules.py): structures, nested modules and
-- qualified names, `open`, local open `M.(e)` (whose names shadow the local variables), parametric modules
-- applied to a structure and to prelude modules, operators defined in modules and qualified (`P.+`), module
-- types (parsed, not checked) and ascriptions.
-- ==
-- input { [1, 2, 3] [1.5f32, 2.5f32] }
-- output { 124i32 4.0f32 6i32 20i32 4.0f32 }
-- input { empty([0]i32) empty([0]f32) }
-- output { 118i32 0.0f32 0i32 20i32 4.0f32 }

module type num = { type t val + : t -> t -> t val i32: i32 -> t }

module M = {
  def x = 1i32
  def f (y: i32) = y + x
  type t = i32
  module N = { def z = 3i32 }
  def g (v: t) : t = f v * N.z
  def (+^) (a: i32) (b: i32) = a * 10 + b
}

module F (P: num) = {
  def sum (xs: []P.t) : P.t = reduce (P.+) (P.i32 0) xs
  def twice (x: P.t) : P.t = x P.+ x
}

module G = F({ type t = i32 def (+) (a: i32) (b: i32) = a + b def i32 (x: i32) = x })
module H : num = F i32
module Hf = F f32

open M

entry main (xs: []i32) (ys: []f32) : (i32, f32, i32, i32, f32) =
  let x = 100i32 -- shadows M.x
  in (G.sum xs + M.f 2 + M.(x + N.z) + f 1 + x + g 2, Hf.sum ys, H.sum xs, 1 +^ 2 + G.twice 4,
      f32.(sqrt 16 + pi - pi))
