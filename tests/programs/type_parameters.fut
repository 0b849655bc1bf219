-- Type parameters ('t): polymorphic functions, inlined and checked at each use with the arguments' types.
-- ==
-- input { [1,2,3] [[1.0f32,2.0f32],[3.0f32,4.0f32]] }
-- output { [3,2,1] [[3.0f32,4.0f32],[1.0f32,2.0f32]] 3 1 2.0f32 [[1.0f32,3.0f32],[2.0f32,4.0f32]] }
def rev 't (xs: []t): []t = xs[::-1]
def first 'a 'b (p: (a, b)): a = p.0
def swap 'a 'b ((x, y): (a, b)): (b, a) = (y, x)
def last_of [n] 't (xs: [n]t): t = xs[n - 1]
def tr [n][m] 't (xss: [n][m]t): [m][n]t = transpose xss
entry main (xs: []i32) (yss: [][]f32) =
  (rev xs, rev yss, last_of xs, swap (swap (first (1i32, 2i32), 2.0f32)), tr yss)
