module formgate.bench

go 1.19
