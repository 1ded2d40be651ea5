import Testing

@testable import Tensor

/// `ODML_KERNEL_LEVEL`: a lower level is used, anything else is ignored with a note that says why.
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
                == "avx512: ODML_KERNEL_LEVEL=neon names no level (portable, avx2, avx512, avx512-vnni, neon-dotprod, neon-i8mm), ignored")
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

    @Test func testsCompareEveryLevelTheCPURuns() {
        #expect(Kernels.availableLevels.last == Kernels.cpuLevel)
        #expect(Kernels.level <= Kernels.cpuLevel)
    }
}
