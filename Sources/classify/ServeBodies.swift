import DataFiles
import Foundation
import Models
import WeightsFormat

/// The API's JSON bodies, read with the weights header's parser (`JSONCursor`) value by value: no tree of the
/// whole body is built, every limit (the points of a drawing, the samples of a recording) stops the reading where
/// it is passed, and a syntax error says where it is (line, column, byte). A key given twice is refused, not
/// silently read one way or the other.
///
/// Syntax errors are `ServeAPI.Failure`s with status 400 ("the body is not …"); a body that is JSON of the right
/// shape but not a drawing or recording the models take throws a `DataError` (422, as the CLI reports it).
extension ServeAPI {
    /// `{"strokes": [[[x, y], [x, y, t], …], …]}`: the drawing, checked point by point as a drawing file is.
    /// Other members are read past. Reading stops at point `maximumPoints + 1`.
    static func drawing(fromJSON body: Data, maximumPoints: Int = DrawingReader.maximumPoints) throws -> Drawing {
        let shape = "{\"strokes\": [[[x, y], …], …]}"
        var cursor = JSONCursor(ArraySlice(body), file: "request")
        var strokes: [[DrawingPoint]] = []
        var count = 0
        var found = false
        try syntax(shape) { () throws(DataError) in try cursor.beginObject("an object \(shape)") }
        var keys: [String] = []
        while let key = try syntax(shape, { () throws(DataError) in try cursor.nextKey(&keys) }) {
            guard key == "strokes" else {
                try syntax(shape) { () throws(DataError) in try cursor.skipValue() }
                continue
            }
            found = true
            try syntax(shape) { () throws(DataError) in try cursor.beginArray("an array of strokes") }
            var s = 0
            while try syntax(shape, { () throws(DataError) in try cursor.nextElement(after: s) }) {
                defer { s += 1 }
                try syntax(shape) { () throws(DataError) in try cursor.beginArray("a stroke: an array of points [x, y]") }
                var points: [DrawingPoint] = []
                while try syntax(shape, { () throws(DataError) in try cursor.nextElement(after: points.count) }) {
                    let p = points.count
                    let numbers = try syntax(shape) { () throws(DataError) in try Self.point(&cursor) }
                    guard numbers.count == 2 || numbers.count == 3 else {
                        let counted = numbers.count > 3 ? "more than 3" : "\(numbers.count)"
                        throw DataError(file: "request", message: "strokes[\(s)][\(p)] has \(counted) numbers; a point is [x, y] or [x, y, t]")
                    }
                    for (name, value) in zip(["x", "y"], numbers.prefix(2)) {
                        if let problem = Drawing.coordinateProblem(value) {
                            throw DataError(file: "request", message: "strokes[\(s)][\(p)] \(name): \(problem)")
                        }
                    }
                    count += 1
                    if count > maximumPoints {
                        throw DataError(file: "request", message: "more than \(maximumPoints) points; is this one drawing?")
                    }
                    points.append(DrawingPoint(x: numbers[0], y: numbers[1], t: numbers.count == 3 ? numbers[2] : nil))
                }
                if !points.isEmpty { strokes.append(points) }
            }
        }
        try syntax(shape) { () throws(DataError) in try cursor.end() }
        guard found else { throw Failure(.badRequest, "the body is not \(shape): it has no \"strokes\" member") }
        guard count > 0 else { throw DataError(file: "request", message: "no points: give at least one stroke with points") }
        return Drawing(strokes: strokes)
    }

    /// One point's numbers, `[x, y]` or `[x, y, t]`; at most four are kept (a fourth says there were too many).
    private static func point(_ cursor: inout JSONCursor) throws(DataError) -> [Double] {
        try cursor.beginArray("a point [x, y] or [x, y, t]")
        var numbers: [Double] = []
        numbers.reserveCapacity(3)
        var read = 0
        while try cursor.nextElement(after: read) {
            let value = try cursor.number("a number")
            if numbers.count < 4 { numbers.append(value) }
            read += 1
        }
        return numbers
    }

    /// `{"samples": [{"timestamp": s, "acc.x": g, …}, …]}`, a recording file's rows with its columns as keys, as
    /// the CSV text of that file: the first sample's keys (sorted) are the header, and every sample must have the
    /// same keys. Reading stops at sample `maximumSamples + 1`, as a recording file's does.
    static func csv(fromJSON body: Data, maximumSamples: Int = MotionRecordingReader.maximumSamples) throws -> Data {
        let shape = "{\"samples\": [{\"timestamp\": s, \"acc.x\": g, …}, …]}"
        var cursor = JSONCursor(ArraySlice(body), file: "request")
        var text: [UInt8] = []
        var columns: [String] = []
        var index: [String: Int] = [:]
        var found = false
        var count = 0
        try syntax(shape) { () throws(DataError) in try cursor.beginObject("an object \(shape)") }
        var keys: [String] = []
        while let key = try syntax(shape, { () throws(DataError) in try cursor.nextKey(&keys) }) {
            guard key == "samples" else {
                try syntax(shape) { () throws(DataError) in try cursor.skipValue() }
                continue
            }
            found = true
            try syntax(shape) { () throws(DataError) in try cursor.beginArray("an array of samples") }
            var row: [Double?] = []
            while try syntax(shape, { () throws(DataError) in try cursor.nextElement(after: count) }) {
                guard count < maximumSamples else {
                    throw DataError(
                        file: "request",
                        message: "more than \(maximumSamples) samples, the most one recording is read in; "
                            + "send it in parts")
                }
                var sampleKeys: [String] = []
                var values: [(key: String, value: Double)] = []
                try syntax(shape) { () throws(DataError) in try cursor.beginObject("a sample {\"acc.x\": g, …}") }
                while let name = try syntax(shape, { () throws(DataError) in try cursor.nextKey(&sampleKeys) }) {
                    let value = try syntax(shape) { () throws(DataError) in try cursor.number("a number (\(name))") }
                    values.append((name, value))
                }
                if count == 0 {
                    columns = values.map(\.key).sorted()
                    guard !columns.isEmpty else {
                        throw DataError(file: "request", message: "samples[0] has no keys; give the columns of a recording")
                    }
                    for column in columns where !column.utf8.allSatisfy(Self.isColumnNameByte) {
                        throw DataError(
                            file: "request",
                            message: "samples[0] has the key \(String(reflecting: column)), which is no column name (letters, digits, '.', '_')")
                    }
                    index = Dictionary(uniqueKeysWithValues: columns.enumerated().map { ($1, $0) })
                    text += Array(columns.joined(separator: ",").utf8) + [0x0A]
                    row = Array(repeating: nil, count: columns.count)
                }
                for i in row.indices { row[i] = nil }
                for (name, value) in values {
                    guard let column = index[name] else { throw Self.keysProblem(count, values, columns) }
                    row[column] = value
                }
                guard values.count == columns.count else { throw Self.keysProblem(count, values, columns) }
                for (i, value) in row.enumerated() {
                    if i > 0 { text.append(UInt8(ascii: ",")) }
                    text += Array("\(value ?? 0)".utf8)
                }
                text.append(0x0A)
                count += 1
            }
        }
        try syntax(shape) { () throws(DataError) in try cursor.end() }
        guard found else { throw Failure(.badRequest, "the body is not \(shape): it has no \"samples\" member") }
        guard count > 0 else { throw DataError(file: "request", message: "no samples") }
        return Data(text)
    }

    private static func isColumnNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    private static func keysProblem(_ i: Int, _ values: [(key: String, value: Double)], _ columns: [String]) -> DataError {
        DataError(file: "request", message: "samples[\(i)] has keys \(values.map(\.key).sorted()); every sample needs \(columns)")
    }

    /// `read()`, its syntax errors as 400 "the body is not SHAPE: request:LINE: column …".
    private static func syntax<T>(_ shape: String, _ read: () throws(DataError) -> T) throws(Failure) -> T {
        do {
            return try read()
        } catch {
            throw Failure(.badRequest, "the body is not \(shape): \(error)")
        }
    }
}
