-- Reversing slices (negative strides) on the host and in kernels, in every version: they once read
-- memory outside the view.
-- ==
-- input { [1,2,3,4,5] [[1,2,3],[4,5,6]] }
-- output { [5,4,3,2,1] [[3,2,1],[6,5,4]] [5,3,1] [[6,5,4],[3,2,1]] }
entry main (s: []i32) (as: [][]i32) = (s[::-1], as[:, ::-1], s[::-2], as[::-1, ::-1])
