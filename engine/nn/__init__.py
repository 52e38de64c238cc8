"""Layer 3, nn: what scores a position. The net's inputs (encode), the net itself run in
numba from exported weights, its model files and the cubeless equity (eval), and Tesauro's
pubeval for benchmarks (pubeval). May import core and rules (never formats: kernels
work on arrays)."""
