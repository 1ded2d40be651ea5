#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The C math library, named once so the rest of the module reads as plain Swift.

@inline(__always) func _log(_ x: Double) -> Double { log(x) }
@inline(__always) func _sin(_ x: Double) -> Double { sin(x) }
@inline(__always) func _cos(_ x: Double) -> Double { cos(x) }
@inline(__always) func _exp(_ x: Double) -> Double { exp(x) }
@inline(__always) func _expf(_ x: Float) -> Float { expf(x) }
@inline(__always) func _logf(_ x: Float) -> Float { logf(x) }
@inline(__always) func _log1pf(_ x: Float) -> Float { log1pf(x) }
@inline(__always) func _expm1f(_ x: Float) -> Float { expm1f(x) }
@inline(__always) func _tanhf(_ x: Float) -> Float { tanhf(x) }
@inline(__always) func _tanh(_ x: Double) -> Double { tanh(x) }
@inline(__always) func _cbrt(_ x: Double) -> Double { cbrt(x) }
