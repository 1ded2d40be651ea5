import Foundation
import Testing

@testable import classify

/// `PercentText.append` against its twin, `String(format: "%.1f%%", 100 * value)`, bit for bit: ties, the ends of
/// the range, values just beside a tenth, random values, and those it hands to the twin.
@Suite("Percent text equals String(format:)")
struct PercentTextTests {
    func expectSame(_ value: Double, sourceLocation: SourceLocation = #_sourceLocation) {
        var bytes: [UInt8] = Array("x".utf8)
        PercentText.append(value, to: &bytes)
        let expected = "x" + String(format: "%.1f%%", 100 * value)
        #expect(String(decoding: bytes, as: UTF8.self) == expected, "\(value) (bits \(value.bitPattern))", sourceLocation: sourceLocation)
    }

    @Test func tiesAndNeighboursOfEveryTenth() {
        for k in 0...2000 {
            // k/2000 · 100 = k/20: the tenths and the midpoints between them (the ties), and the doubles beside them.
            let value = Double(k) / 2000
            for candidate in [value, value.nextUp, value.nextDown, value.nextUp.nextUp, value.nextDown.nextDown] where candidate >= 0 {
                expectSame(candidate)
            }
            let percent = Double(k) / 20
            for candidate in [percent, percent.nextUp, percent.nextDown] { expectSame(candidate / 100) }
        }
    }

    @Test func ordinaryAndUnusualValues() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20000 { expectSame(Double.random(in: 0...1, using: &generator)) }
        for _ in 0..<2000 { expectSame(Double.random(in: 0...1e6, using: &generator)) }
        for value in [
            0, 1, 0.9995, 0.99949999999999, 0.00049999, 0.0005, 0.0015, 0.0025, 1e-300, .leastNonzeroMagnitude, 1e11, 9.99e11, 1e12, 1e13,
            -0.0, -0.0004, -0.5, 3e300, .infinity, -.infinity, .nan, .greatestFiniteMagnitude,
        ] {
            expectSame(value)
        }
    }
}
