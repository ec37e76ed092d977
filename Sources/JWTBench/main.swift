print("jwt-bench")
