-- Rodinia's LU decomposition without pivoting (Doolittle: L has a unit diagonal; L and U packed into one
-- matrix), blocked with blocks of 32 x 32 as in Rodinia and the thesis. A sequential loop over the diagonal
-- blocks k; in each step, the diagonal block is factored, the blocks right of it (row k) and below it (column
-- k) are solved against it, and each interior block is updated with the product of its row's and its
-- column's perimeter blocks. The maps over blocks shrink in every step: the thesis's loop case, where a guard
-- sees a different degree of parallelism in every iteration. The matrix size must be a multiple of 32.
--
-- Generate the data files first: python futhark_examples/gen_data.py lud
-- ==
-- entry: main
-- "ci" ci input @ data/lud-ci.in output @ data/lud-ci.out
-- "ci-96" ci input @ data/lud-ci-96.in output @ data/lud-ci-96.out
-- "train-512" train input @ data/lud-train-512.in output @ data/lud-train-512.out
-- "64" paper notune input @ data/lud-64.in output @ data/lud-64.out
-- "256" paper notune input @ data/lud-256.in output @ data/lud-256.out
-- "1024" paper notune input @ data/lud-1024.in output @ data/lud-1024.out
-- "2048" paper notune input @ data/lud-2048.in output @ data/lud-2048.out

def block_size: i64 = 32

-- The diagonal block factored in place: in step i, the column below the pivot is divided by it and the
-- trailing block updated (right-looking).
def factor_diagonal [b] (blk: [b][b]f32): [b][b]f32 =
  loop blk for i < b do
    let pivot = blk[i, i]
    in map (\r -> map (\c -> if r > i && c == i then blk[r, i] / pivot
                             else if r > i && c > i then blk[r, c] - blk[r, i] / pivot * blk[i, c]
                             else blk[r, c]) (iota b)) (iota b)

-- A block right of the diagonal: L⁻¹ blk, with L the diagonal block's unit lower triangle.
def solve_row [b] (diag: [b][b]f32) (blk: [b][b]f32): [b][b]f32 =
  loop blk for i < b do
    map (\r -> map (\c -> if r > i then blk[r, c] - diag[r, i] * blk[i, c] else blk[r, c]) (iota b)) (iota b)

-- A block below the diagonal: blk U⁻¹, with U the diagonal block's upper triangle.
def solve_column [b] (diag: [b][b]f32) (blk: [b][b]f32): [b][b]f32 =
  loop blk for i < b do
    map (\r -> map (\c -> let x = blk[r, i] / diag[i, i]
                          in if c == i then x else if c > i then blk[r, c] - x * diag[i, c] else blk[r, c])
                   (iota b)) (iota b)

-- An interior block minus the product of its column's and its row's perimeter blocks.
def update_interior [b] (left: [b][b]f32) (top: [b][b]f32) (blk: [b][b]f32): [b][b]f32 =
  map2 (\lrow brow -> map2 (\tcol x -> x - f32.sum (map2 (*) lrow tcol)) (transpose top) brow) left blk

entry main [n] (matrix: [n][n]f32): [n][n]f32 =
  let b = block_size
  let nb = assert (n % b == 0) (n / b)
  let blocks = tabulate_2d nb nb (\bi bj -> tabulate_2d b b (\i j -> matrix[bi * b + i, bj * b + j]))
  let blocks =
    loop blocks for k < nb do
      let rest = nb - k - 1
      let diag = factor_diagonal blocks[k, k]
      let row = map (\j -> solve_row diag blocks[k, k + 1 + j]) (iota rest)
      let column = map (\i -> solve_column diag blocks[k + 1 + i, k]) (iota rest)
      let interior = map (\i -> map (\j -> update_interior column[i] row[j] blocks[k + 1 + i, k + 1 + j])
                                    (iota rest)) (iota rest)
      in tabulate_2d nb nb (\bi bj ->
           if bi == k && bj == k then diag
           else if bi == k && bj > k then row[bj - k - 1]
           else if bj == k && bi > k then column[bi - k - 1]
           else if bi > k && bj > k then interior[bi - k - 1, bj - k - 1]
           else blocks[bi, bj])
  in tabulate_2d n n (\i j -> blocks[i / b, j / b, i % b, j % b])
