-- An anonymous size of an entry point's parameter (here inferred) meets a size that an annotation gives, in a
-- function applied to it: as in Futhark, the size is the annotation's, checked when the program runs.
-- ==
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] }
-- output { [6.0, 15.0] }
-- input { [[1.0, 2.0], [4.0, 5.0]] }
-- error: Cannot coerce

entry main xss =
  let sum3 (arr: [3]f64) = arr[0] + arr[1] + arr[2]
  in map sum3 xss
