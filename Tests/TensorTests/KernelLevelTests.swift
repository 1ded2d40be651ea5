import Foundation
import Testing

@testable import Tensor

/// `ODML_KERNEL_LEVEL`: a level this CPU runs is used, anything else is ignored with a note that says why.
@Suite struct KernelLevelTests {
    @Test func notSetOrEmptyKeepsTheCPUsLevel() {
        for cpu in Kernels.Level.allCases {
            #expect(Kernels.chooseLevel(cpu: cpu, requested: nil) == (cpu, nil))
            #expect(Kernels.chooseLevel(cpu: cpu, requested: "") == (cpu, nil))
        }
    }

    @Test func aLevelTheCPURunsIsUsed() {
        let chosen = Kernels.chooseLevel(cpu: .avx512VNNI, requested: "AVX2")
        #expect(chosen.level == .avx2)
        #expect(chosen.note == "avx2, forced by ODML_KERNEL_LEVEL (this CPU runs avx512-vnni)")
        for cpu in Kernels.Level.allCases {
            for wanted in Kernels.Level.allCases where wanted.runs(on: cpu) {
                #expect(Kernels.chooseLevel(cpu: cpu, requested: wanted.description).level == wanted, "cpu \(cpu), wanted \(wanted)")
            }
        }
    }

    @Test func aHigherLevelOrAnUnknownNameIsIgnored() {
        let higher = Kernels.chooseLevel(cpu: .avx2, requested: "avx512-vnni")
        #expect(higher.level == .avx2)
        #expect(higher.note == "avx2: ODML_KERNEL_LEVEL=avx512-vnni is not a level this CPU runs, ignored")
        let unknown = Kernels.chooseLevel(cpu: .avx512, requested: "neon")
        #expect(unknown.level == .avx512)
        #expect(
            unknown.note
                == "avx512: ODML_KERNEL_LEVEL=neon names no level (portable, avx2, avx-vnni, avx512, avx512-vnni, neon-dotprod, neon-i8mm), ignored")
    }

    @Test func anotherArchitecturesLevelIsIgnored() {
        let arm = Kernels.chooseLevel(cpu: .avx512VNNI, requested: "neon-dotprod")
        #expect(arm.level == .avx512VNNI)
        #expect(arm.note == "avx512-vnni: ODML_KERNEL_LEVEL=neon-dotprod is not a level this CPU runs, ignored")
        let x86 = Kernels.chooseLevel(cpu: .neonI8mm, requested: "avx2")
        #expect(x86.level == .neonI8mm)
        #expect(Kernels.chooseLevel(cpu: .neonI8mm, requested: "neon-dotprod").level == .neonDotprod)
        #expect(Kernels.chooseLevel(cpu: .neonDotprod, requested: "portable").level == .portable)
        #expect(Kernels.Level.allCases.filter { $0.runs(on: .neonI8mm) } == [.portable, .neonDotprod, .neonI8mm])
        #expect(Kernels.Level.allCases.filter { $0.runs(on: .avx512) } == [.portable, .avx2, .avx512])
    }

    /// AVX-VNNI is a feature of its own: a CPU with AVX-512 may have it (Sapphire Rapids) or not (Ice Lake, Zen 4),
    /// and one with it may lack AVX-512 (Alder Lake).
    @Test func avxVNNIIsForcedOnlyWhereTheCPUHasIt() {
        #expect(Kernels.Level.allCases.filter { $0.runs(on: .avxVNNI) } == [.portable, .avx2, .avxVNNI])
        #expect(Kernels.Level.allCases.filter { $0.runs(on: .avx512VNNI) } == [.portable, .avx2, .avx512, .avx512VNNI])
        let alderLake = Kernels.chooseLevel(cpu: .avxVNNI, requested: "avx512")
        #expect(alderLake.level == .avxVNNI)
        #expect(alderLake.note == "avx-vnni: ODML_KERNEL_LEVEL=avx512 is not a level this CPU runs, ignored")
        #expect(Kernels.chooseLevel(cpu: .avx512VNNI, requested: "avx-vnni").level == .avx512VNNI)
        let sapphireRapids: [Kernels.Level] = [.portable, .avx2, .avxVNNI, .avx512, .avx512VNNI]
        let forced = Kernels.chooseLevel(cpu: .avx512VNNI, available: sapphireRapids, requested: "avx-vnni")
        #expect(forced.level == .avxVNNI)
        #expect(forced.note == "avx-vnni, forced by ODML_KERNEL_LEVEL (this CPU runs avx512-vnni)")
    }

    @Test func testsCompareEveryLevelTheCPURuns() {
        #expect(Kernels.availableLevels.contains(Kernels.cpuLevel))
        #expect(Kernels.cpuLevel.included.allSatisfy { Kernels.availableLevels.contains($0) })
        #expect(Kernels.availableLevels.contains(Kernels.level))
    }

    /// The C detection agrees with what Linux says the CPU has (/proc/cpuinfo's flags or features), level by level.
    @Test func theLevelsAreTheFlagsLinuxReports() throws {
        #if os(Linux) && arch(x86_64)
        let info = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let line = try #require(info.split(separator: "\n").first { $0.hasPrefix("flags") })
        let flags = Set(line.split(separator: " ").map(String.init))
        let avx2 = flags.isSuperset(of: ["avx2", "fma"])
        let avx512 = avx2 && flags.isSuperset(of: ["avx512f", "avx512bw", "avx512vl"])
        var expected: [Kernels.Level] = [.portable]
        if avx2 { expected.append(.avx2) }
        if avx2 && flags.contains("avx_vnni") { expected.append(.avxVNNI) }
        if avx512 { expected.append(.avx512) }
        if avx512 && flags.contains("avx512_vnni") { expected.append(.avx512VNNI) }
        #expect(Kernels.availableLevels == expected, "flags: \(flags.filter { $0.hasPrefix("avx") || $0 == "fma" }.sorted())")
        #elseif os(Linux) && arch(arm64)
        // ARM64 Linux lists the HWCAP names on its "Features" lines: asimddp (dotprod), i8mm.
        let info = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let line = try #require(info.split(separator: "\n").first { $0.hasPrefix("Features") })
        let features = Set(line.split(separator: " ").map(String.init))
        var expected: [Kernels.Level] = [.portable]
        if features.contains("asimddp") { expected.append(.neonDotprod) }
        if features.contains("asimddp") && features.contains("i8mm") { expected.append(.neonI8mm) }
        #expect(Kernels.availableLevels == expected, "features: \(features.sorted())")
        #endif
    }
}
