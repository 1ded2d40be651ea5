import CKernels

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The engine's only door to its hand-written C kernels (Sources/CKernels): every `odml_*` call is in this file.
///
/// Each kernel exists for several instruction-set levels; `Kernels.level` is the best this CPU runs (or the other
/// one it runs that `ODML_KERNEL_LEVEL` names), chosen once at start-up, and tests pass every level in
/// `availableLevels` to check each variant against the naive references.
public enum Kernels {
    /// Instruction-set levels the kernels are compiled for: x86-64's `avx2`, `avxVNNI`, `avx512` and `avx512VNNI`,
    /// ARM64's `neonDotprod` and `neonI8mm`, and `portable` on both. Every x86-64 level includes AVX2, and
    /// `avx512VNNI` includes `avx512`; AVX-VNNI is a CPU feature of its own (Alder Lake and later, Zen 5 have it,
    /// earlier AVX-512 CPUs do not), so which levels a CPU runs is `Kernels.availableLevels`.
    public enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        /// Plain C for the compiler's baseline target (any CPU).
        case portable = 0
        /// AVX2 with FMA.
        case avx2 = 1
        /// AVX2 with FMA and AVX-VNNI's 256-bit 8-bit dot products (`vpdpbusd` in its VEX form), without AVX-512.
        case avxVNNI = 2
        /// AVX-512 F, BW and VL.
        case avx512 = 3
        /// AVX-512 with VNNI 8-bit dot products.
        case avx512VNNI = 4
        /// ARM64 NEON with the dot product instructions (`sdot`; Linux's HWCAP_ASIMDDP).
        case neonDotprod = 5
        /// ARM64 NEON with dot products and the 8-bit matrix multiply instructions (`usdot`; HWCAP2_I8MM).
        case neonI8mm = 6

        /// Lower instruction sets first: a listing order, not inclusion (`avxVNNI` < `avx512`, yet an AVX-512 CPU
        /// may lack AVX-VNNI). Whether a CPU runs a level is `availableLevels.contains`, never `<=`.
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }

        /// Whether the level is one of ARM64's.
        var isARM: Bool { self == .neonDotprod || self == .neonI8mm }

        /// The levels a level's instructions include, itself among them: `avx512VNNI` runs `avx512`, `avx2` and
        /// `portable`; `avxVNNI` runs `avx2` and `portable`.
        var included: [Level] {
            switch self {
            case .portable: [.portable]
            case .avx2: [.portable, .avx2]
            case .avxVNNI: [.portable, .avx2, .avxVNNI]
            case .avx512: [.portable, .avx2, .avx512]
            case .avx512VNNI: [.portable, .avx2, .avx512, .avx512VNNI]
            case .neonDotprod: [.portable, .neonDotprod]
            case .neonI8mm: [.portable, .neonDotprod, .neonI8mm]
            }
        }

        /// Whether a CPU whose best level is `cpu` surely runs this level: one that level's instructions include.
        /// (A CPU may run more: `availableLevels` asks the CPU itself, as for AVX-VNNI beside AVX-512.)
        public func runs(on cpu: Level) -> Bool { cpu.included.contains(self) }

        /// The level's name: `portable`, `avx2`, `avx-vnni`, `avx512`, `avx512-vnni`, `neon-dotprod`, `neon-i8mm`.
        public var description: String {
            switch self {
            case .portable: "portable"
            case .avx2: "avx2"
            case .avxVNNI: "avx-vnni"
            case .avx512: "avx512"
            case .avx512VNNI: "avx512-vnni"
            case .neonDotprod: "neon-dotprod"
            case .neonI8mm: "neon-i8mm"
            }
        }
    }

    /// The best level this CPU runs, whatever `ODML_KERNEL_LEVEL` says: the 512-bit ones first, then AVX-VNNI, AVX2.
    public static let cpuLevel: Level = Level(rawValue: Int(odml_cpu_level())) ?? .portable

    /// The levels this CPU runs, lowest first (what tests compare), whatever `ODML_KERNEL_LEVEL` says.
    public static let availableLevels: [Level] = Level.allCases.filter { odml_cpu_runs(Int32($0.rawValue)) != 0 }

    /// The environment variable that picks the level every default path uses, so that each level this CPU runs
    /// can be measured on one machine: `portable`, `avx2`, `avx-vnni`, `avx512`, `avx512-vnni`, `neon-dotprod` or
    /// `neon-i8mm`.
    public static let levelVariable = "ODML_KERNEL_LEVEL"

    /// The level and note `ODML_KERNEL_LEVEL` gives on this CPU, read once at start-up.
    private static let chosen = chooseLevel(
        cpu: cpuLevel, available: availableLevels, requested: getenv(levelVariable).map { String(cString: $0) })

    /// The level every path uses unless told otherwise: `cpuLevel`, or the other level `ODML_KERNEL_LEVEL` names
    /// (see `chooseLevel`).
    public static let level: Level = chosen.level

    /// What `ODML_KERNEL_LEVEL` did, for reports: nil when it is not set, else a sentence such as "avx2, forced by
    /// ODML_KERNEL_LEVEL (this CPU runs avx512-vnni)".
    public static let levelNote: String? = chosen.note

    /// `levelNote` when `ODML_KERNEL_LEVEL` is set and ignored (it names no level, or one this CPU does not run):
    /// what a command-line tool says once on standard error, so that a typo does not pass for a measurement.
    public static let ignoredLevelNote: String? = {
        guard let requested = getenv(levelVariable).map({ String(cString: $0) }), !requested.isEmpty,
            !availableLevels.contains(where: { $0.description == requested.lowercased() })
        else { return nil }
        return levelNote
    }()

    /// The level for a CPU whose best level is `cpu` and that runs `available` when `requested` names one
    /// (case-insensitive; empty is not set): the named level when it is available; `cpu` when it names one the CPU
    /// lacks or another architecture's (its instructions would stop the process) or no level at all. The note says
    /// which happened.
    package static func chooseLevel(cpu: Level, available: [Level], requested: String?) -> (level: Level, note: String?) {
        guard let requested, !requested.isEmpty else { return (cpu, nil) }
        let names = Level.allCases.map(\.description).joined(separator: ", ")
        guard let named = Level.allCases.first(where: { $0.description == requested.lowercased() }) else {
            return (cpu, "\(cpu): \(levelVariable)=\(requested) names no level (\(names)), ignored")
        }
        guard available.contains(named) else {
            return (cpu, "\(cpu): \(levelVariable)=\(requested) is not a level this CPU runs, ignored")
        }
        return (named, "\(named), forced by \(levelVariable) (this CPU runs \(cpu))")
    }

    /// `chooseLevel(cpu:available:requested:)` for a CPU that runs just what `cpu` includes.
    package static func chooseLevel(cpu: Level, requested: String?) -> (level: Level, note: String?) {
        chooseLevel(cpu: cpu, available: cpu.included, requested: requested)
    }

    /// A direct 2-D convolution of one image; see `odml_conv2d_f32_args` in CKernels.h for every field.
    static func conv2D(_ arguments: odml_conv2d_f32_args, level: Level) {
        withUnsafePointer(to: arguments) { odml_conv2d_f32($0, Int32(level.rawValue)) }
    }

    /// `output = relu?(bias + input · weights)` for one sample, weights packed `[inFeatures][paddedOut]`.
    static func dense(
        input: UnsafePointer<Float>, inFeatures: Int, weights: UnsafePointer<Float>, bias: UnsafePointer<Float>,
        outFeatures: Int, output: UnsafeMutablePointer<Float>, relu: Bool, level: Level
    ) {
        odml_dense_f32(input, Int32(inFeatures), weights, bias, Int32(outFeatures), output, relu ? 1 : 0, Int32(level.rawValue))
    }

    /// `dense` for `rows` inputs of `inFeatures` floats into `rows` outputs of `outFeatures`, contiguous: each row
    /// exactly as `dense` gives it (see `odml_dense_f32_rows`).
    static func dense(
        rows: Int, input: UnsafePointer<Float>, inFeatures: Int, weights: UnsafePointer<Float>, bias: UnsafePointer<Float>,
        outFeatures: Int, output: UnsafeMutablePointer<Float>, relu: Bool, level: Level
    ) {
        odml_dense_f32_rows(
            input, inFeatures, Int32(rows), Int32(inFeatures), weights, bias, Int32(outFeatures), output, outFeatures,
            relu ? 1 : 0, Int32(level.rawValue))
    }

    /// An 8-bit direct convolution of one image; see `odml_conv2d_i8_args` in CKernels.h.
    static func integerConv2D(_ arguments: odml_conv2d_i8_args, level: Level) {
        withUnsafePointer(to: arguments) { odml_conv2d_i8($0, Int32(level.rawValue)) }
    }

    /// The most padded inputs `integerDense` takes (its bytes live on the C stack).
    static let integerDenseMaxInput = Int(ODML_DENSE_I8_MAX_INPUT)

    /// An 8-bit dense layer of one float sample: the input quantized, then the integer dot products, in one call;
    /// see `odml_dense_i8` (the step's weights and numbers are an `IntegerConvolutionStep`'s, a 1×1 convolution;
    /// `narrowWeights` only when every weight lies in −63…63).
    static func integerDense(
        _ input: UnsafePointer<Float>, inFeatures: Int, quantization: ActivationQuantization, paddedIn: Int,
        weights: UnsafePointer<Int8>, correction: UnsafePointer<Int32>, scale: UnsafePointer<Float>, bias: UnsafePointer<Float>,
        outFeatures: Int, output: UnsafeMutablePointer<Float>, relu: Bool, narrowWeights: Bool, level: Level
    ) {
        odml_dense_i8(
            input, Int32(inFeatures), 1 / quantization.scale, Int32(quantization.zeroPoint), Int32(paddedIn), weights,
            correction, scale, bias, Int32(outFeatures), output, relu ? 1 : 0, narrowWeights ? 1 : 0, Int32(level.rawValue))
    }

    /// `pixels` pixels of `channels` floats (`pixelStride` apart) quantized to pixels of `outChannels` bytes.
    static func quantize(
        _ input: UnsafePointer<Float>, pixels: Int, channels: Int, pixelStride: Int, into output: UnsafeMutablePointer<UInt8>,
        outChannels: Int, quantization: ActivationQuantization, level: Level
    ) {
        odml_quantize_u8(
            input, Int32(pixels), Int32(channels), pixelStride, output, Int32(outChannels), 1 / quantization.scale,
            Int32(quantization.zeroPoint), Int32(level.rawValue))
    }

    /// Max or average pooling of one image without padding; see `odml_pool2d_f32_args`.
    static func pool2D(_ arguments: odml_pool2d_f32_args, level: Level) {
        withUnsafePointer(to: arguments) { odml_pool2d_f32($0, Int32(level.rawValue)) }
    }
}

/// `count` rounded up to a multiple of 8: the output width the float kernels' weight packing uses.
@inline(__always) func paddedToEight(_ count: Int) -> Int { (count + 7) & ~7 }
