import Foundation

/// Percentages as the CLI prints them: `String(format: "%.1f%%", 100 * value)`, written straight into bytes.
enum PercentText {
    /// Appends `String(format: "%.1f%%", 100 * value)` to `bytes`.
    ///
    /// For +0 ≤ 100·value < 10¹⁴ the digits are found without formatting: the nearest tenth `k / 10` is guessed from
    /// `100·value·10` and corrected by the exact sign of `20·(100·value) − (2k ± 1)` (one fused multiply-add, rounded
    /// once, so its sign is exact), ties going to the even tenth as the C library's `printf` rounds them. Other values
    /// (negative, huge, not finite) go through `String(format:)`, the twin tests compare it with.
    static func append(_ value: Double, to bytes: inout [UInt8]) {
        let percent = 100 * value
        guard percent.sign == .plus, percent < 1e14 else {  // -0.0 prints as "-0.0"
            bytes += Array(String(format: "%.1f%%", percent).utf8)
            return
        }
        var tenths = Int((percent * 10).rounded())
        // Above the midpoint between k/10 and (k+1)/10: k is too small; below the one between (k-1)/10 and k/10: too large.
        while (-Double(2 * tenths + 1)).addingProduct(percent, 20) > 0 { tenths += 1 }
        while tenths > 0 && (-Double(2 * tenths - 1)).addingProduct(percent, 20) < 0 { tenths -= 1 }
        // Exactly halfway: the even one.
        if tenths % 2 == 1 {
            if (-Double(2 * tenths + 1)).addingProduct(percent, 20) == 0 {
                tenths += 1
            } else if (-Double(2 * tenths - 1)).addingProduct(percent, 20) == 0 {
                tenths -= 1
            }
        }
        appendDecimal(tenths / 10, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        bytes.append(UInt8(ascii: "0") + UInt8(tenths % 10))
        bytes.append(UInt8(ascii: "%"))
    }

    /// Appends the decimal digits of `value` (≥ 0).
    static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        guard value >= 10 else {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        appendDecimal(value / 10, to: &bytes)
        bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
    }
}
