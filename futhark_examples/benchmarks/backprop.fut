-- Rodinia's back-propagation (backprop): one training step of a two-layer perceptron with n_in inputs,
-- n_hid hidden units (16 in Rodinia) and n_out outputs (1): the forward pass (each hidden unit squashes a
-- dot product over the n_in inputs; each output one over the hidden units), the output error and the
-- hidden error, then the weight adjustments with momentum of both weight matrices. Row 0 of a weight matrix
-- holds the bias weights (Rodinia's input unit 0, fixed at 1). Rodinia's unused column 0 is left out, so the
-- input weights are [n_in+1][n_hid]. The parallelism: the forward pass is a map over the hidden units of a
-- reduction over the inputs (few units, long reductions); the weight update is a map over the n_in+1 rows of
-- a map over the hidden units.
--
-- Generate the data files first: python futhark_examples/gen_data.py backprop
-- ==
-- entry: main
-- "ci" ci input @ data/backprop-ci.in output @ data/backprop-ci.out
-- "D1" paper notune input @ data/backprop-D1.in output @ data/backprop-D1.out
-- "D2" paper notune input @ data/backprop-D2.in output @ data/backprop-D2.out
-- "train-D1" train input @ data/backprop-train-D1.in output @ data/backprop-train-D1.out
-- "train-D2" train input @ data/backprop-train-D2.in output @ data/backprop-train-D2.out

def eta: f32 = 0.3
def momentum: f32 = 0.3

def squash (x: f32): f32 = 1 / (1 + f32.exp (-x))

-- The units of the next layer: each squashes its bias plus the dot product of the layer's units with its
-- column of the weights.
def layer_forward [n1][n2] (units: [n1]f32) (weights: [n1+1][n2]f32): [n2]f32 =
  map2 (\bias column -> squash (bias + f32.sum (map2 (*) units column)))
       weights[0] (transpose weights[1:] :> [n2][n1]f32)

-- The output layer's deltas and the sum of their magnitudes.
def output_error [n] (target: [n]f32) (output: [n]f32): (f32, [n]f32) =
  let delta = map2 (\t o -> o * (1 - o) * (t - o)) target output
  in (f32.sum (map f32.abs delta), delta)

-- The hidden layer's deltas (the output deltas propagated back through the hidden weights) and the sum of
-- their magnitudes.
def hidden_error [no][nh] (delta_out: [no]f32) (hidden_weights: [nh+1][no]f32) (hidden: [nh]f32): (f32, [nh]f32) =
  let delta = map2 (\h row -> h * (1 - h) * f32.sum (map2 (*) delta_out row))
                   hidden (hidden_weights[1:] :> [nh][no]f32)
  in (f32.sum (map f32.abs delta), delta)

-- The weights after one step with momentum, and the step taken (the next call's previous step). The layer's
-- unit 0 is the bias input 1.
def adjust_weights [nd][nl] (delta: [nd]f32) (units: [nl]f32) (w: [nl+1][nd]f32) (prev_dw: [nl+1][nd]f32)
                   : ([nl+1][nd]f32, [nl+1][nd]f32) =
  let units_ext = tabulate (nl+1) (\k -> if k == 0 then 1 else units[k-1])
  in unzip (map3 (\w_row prev_row unit ->
                    unzip (map3 (\w_el prev_el delta_el ->
                                   let dw = eta * delta_el * unit + momentum * prev_el
                                   in (w_el + dw, dw))
                                w_row prev_row delta))
                 w prev_dw units_ext)

entry main [n_in][n_hid][n_out]
           (input_units: [n_in]f32) (target: [n_out]f32)
           (input_weights: [n_in+1][n_hid]f32) (hidden_weights: [n_hid+1][n_out]f32)
           (input_prev_weights: [n_in+1][n_hid]f32) (hidden_prev_weights: [n_hid+1][n_out]f32)
           : (f32, f32, [n_in+1][n_hid]f32, [n_hid+1][n_out]f32) =
  let hidden_units = layer_forward input_units input_weights
  let output_units = layer_forward hidden_units hidden_weights
  let (out_err, output_delta) = output_error target output_units
  let (hid_err, hidden_delta) = hidden_error output_delta hidden_weights hidden_units
  let (hidden_weights', _) = adjust_weights output_delta hidden_units hidden_weights hidden_prev_weights
  let (input_weights', _) = adjust_weights hidden_delta input_units input_weights input_prev_weights
  in (out_err, hid_err, input_weights', hidden_weights')
