/// Plain decimal numbers read straight from a CSV field's bytes — the fast path of `CSVReader.number(column:)`.
/// Its naive twin is `Double(String)` (the C library's correctly rounded `strtod`); CSVReaderTests compares the
/// two bit for bit.
package enum DecimalText {
    /// 10⁰…10²²: every one is exact in Double (5²² < 2⁵³).
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ]

    /// The value of `bytes` when they spell `[+-]digits[.digits][(e|E)[+-]digits]` with at most 19 digits before
    /// the exponent, a significand (the digits as an integer) of at most 2⁵³ and a power of ten within ±22;
    /// otherwise `nil`, and the caller asks `Double(String)`.
    ///
    /// Within those bounds the significand and the power of ten are both exact in Double, so one multiplication or
    /// division, rounded once to nearest even, gives the correctly rounded value — the same bits as `strtod`
    /// (Clinger's fast path). Phones write a handful of digits, so nearly every sensor value takes it.
    package static func double(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var i = 0
        let count = bytes.count
        var negative = false
        if i < count && (bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+")) {
            negative = bytes[i] == UInt8(ascii: "-")
            i += 1
        }
        var significand: UInt64 = 0, digits = 0, exponent = 0
        while i < count, case let digit = bytes[i] &- UInt8(ascii: "0"), digit < 10 {
            significand = significand &* 10 &+ UInt64(digit)
            digits += 1
            i += 1
        }
        if i < count && bytes[i] == UInt8(ascii: ".") {
            i += 1
            while i < count, case let digit = bytes[i] &- UInt8(ascii: "0"), digit < 10 {
                significand = significand &* 10 &+ UInt64(digit)
                digits += 1
                exponent -= 1
                i += 1
            }
        }
        guard digits > 0, digits <= 19 else { return nil }
        if i < count && (bytes[i] | 0x20) == UInt8(ascii: "e") {
            i += 1
            var negativeExponent = false
            if i < count && (bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+")) {
                negativeExponent = bytes[i] == UInt8(ascii: "-")
                i += 1
            }
            var power = 0, powerDigits = 0
            while i < count, case let digit = bytes[i] &- UInt8(ascii: "0"), digit < 10 {
                power = power &* 10 &+ Int(digit)
                powerDigits += 1
                i += 1
            }
            guard powerDigits > 0, powerDigits <= 4 else { return nil }
            exponent += negativeExponent ? -power : power
        }
        guard i == count, significand <= 1 << 53, exponent >= -22, exponent <= 22 else { return nil }
        let value = exponent < 0 ? Double(significand) / powersOfTen[-exponent] : Double(significand) * powersOfTen[exponent]
        return negative ? -value : value
    }
}
