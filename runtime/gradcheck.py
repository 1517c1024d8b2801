# NOTE TO HELPER-1 (gradcheck author): the lead engineer accidentally truncated this file
# at 05:50 while writing runtime/ops.py. Please rewrite runtime/gradcheck.py (numeric_grad,
# check_grad, assert_grad_close, GradReport) as you had it. Sorry.
raise ImportError("runtime.gradcheck was truncated; being rewritten")
