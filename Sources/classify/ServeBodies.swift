#if Serve
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
        var strokes: [[DrawingPoint]] = []
        var count = 0
        try BodyCursor.member("strokes", of: body, shape: "{\"strokes\": [[[x, y], …], …]}") { cursor in
            try cursor.beginArray("an array of strokes")
            var s = 0
            while try cursor.nextElement(after: s) {
                defer { s += 1 }
                try cursor.beginArray("a stroke: an array of points [x, y]")
                var points: [DrawingPoint] = []
                while try cursor.nextElement(after: points.count) {
                    let p = points.count
                    let (numbers, read) = try cursor.point()
                    guard read == 2 || read == 3 else {
                        let counted = read > 3 ? "more than 3" : "\(read)"
                        throw DataError(file: "request", message: "strokes[\(s)][\(p)] has \(counted) numbers; a point is [x, y] or [x, y, t]")
                    }
                    if let problem = Drawing.coordinateProblem(numbers.x) {
                        throw DataError(file: "request", message: "strokes[\(s)][\(p)] x: \(problem)")
                    }
                    if let problem = Drawing.coordinateProblem(numbers.y) {
                        throw DataError(file: "request", message: "strokes[\(s)][\(p)] y: \(problem)")
                    }
                    count += 1
                    if count > maximumPoints {
                        throw DataError(file: "request", message: "more than \(maximumPoints) points; is this one drawing?")
                    }
                    points.append(DrawingPoint(x: numbers.x, y: numbers.y, t: read == 3 ? numbers.t : nil))
                }
                if !points.isEmpty { strokes.append(points) }
            }
        }
        guard count > 0 else { throw DataError(file: "request", message: "no points: give at least one stroke with points") }
        return Drawing(strokes: strokes)
    }

    /// `{"samples": [{"timestamp": s, "acc.x": g, …}, …]}`, a recording file's rows with its columns as keys, as
    /// the records of that file (`SampleRecords`): the first sample's keys (sorted) are the header, and every sample
    /// must have the same keys. Reading stops at sample `maximumSamples + 1`, as a recording file's does.
    static func records(fromJSON body: Data, maximumSamples: Int = MotionRecordingReader.maximumSamples) throws -> SampleRecords {
        var columns: SampleColumns?
        var values: [Double] = []
        let count = try sampleRows(fromJSON: body, maximumSamples: maximumSamples) { keys, numbers, i in
            if i == 0 {
                let first = SampleColumns(keys: keys)
                guard !first.header.isEmpty else {
                    throw DataError(file: "request", message: "samples[0] has no keys; give the columns of a recording")
                }
                for column in first.header where !column.utf8.allSatisfy(Self.isColumnNameByte) {
                    throw DataError(
                        file: "request",
                        message: "samples[0] has the key \(String(reflecting: column)), which is no column name (letters, digits, '.', '_')")
                }
                columns = first
            }
            try columns?.append(keys, numbers, sample: i, to: &values)
        }
        guard count > 0, let columns else { throw DataError(file: "request", message: "no samples") }
        return SampleRecords(header: columns.header, values: values)
    }

    /// The samples of `{"samples": [{"timestamp": s, "acc.x": g, …}, …]}`, each handed to `take` as its keys (in the
    /// order given; a key given twice is refused), its numbers and its index; returns how many. Reading stops at
    /// sample `maximumSamples + 1`, as a recording file's does. The one reader of JSON samples: `/v1/motion` and the
    /// live sessions.
    static func sampleRows(
        fromJSON body: Data, maximumSamples: Int, _ take: (_ keys: [String], _ values: [Double], _ index: Int) throws -> Void
    ) throws -> Int {
        var count = 0
        // The previous sample's keys: a sample of the same keys (every one, as a rule) reads them without new text.
        var previous: [String] = []
        try BodyCursor.member("samples", of: body, shape: "{\"samples\": [{\"timestamp\": s, \"acc.x\": g, …}, …]}") { cursor in
            try cursor.beginArray("an array of samples")
            while try cursor.nextElement(after: count) {
                guard count < maximumSamples else {
                    throw DataError(
                        file: "request",
                        message: "more than \(maximumSamples) samples, the most one recording is read in; "
                            + "send it in parts")
                }
                var keys: [String] = []
                var values: [Double] = []
                keys.reserveCapacity(previous.count)
                values.reserveCapacity(previous.count)
                try cursor.beginObject("a sample {\"acc.x\": g, …}")
                while let name = try cursor.nextKey(&keys, expecting: previous) {
                    values.append(try cursor.number("a number (\(name))"))
                }
                try take(keys, values, count)
                previous = keys
                count += 1
            }
        }
        return count
    }

    private static func isColumnNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    static func keysProblem(_ i: Int, _ keys: [String], _ columns: [String]) -> DataError {
        DataError(file: "request", message: "samples[\(i)] has keys \(keys.sorted()); every sample needs \(columns)")
    }
}

/// A `JSONCursor` over a request body whose syntax errors are 400 "the body is not SHAPE: request:LINE: column …".
private struct BodyCursor {
    private var cursor: JSONCursor
    /// The JSON the body should be, in errors: `{"strokes": [[[x, y], …], …]}`.
    let shape: String

    /// Reads `body` as one object, calls `read` at the value of its member `name` and reads past the others: 400
    /// when the body is not such an object or has no such member (a key given twice is refused by the cursor).
    static func member(_ name: String, of body: Data, shape: String, _ read: (inout BodyCursor) throws -> Void) throws {
        var cursor = BodyCursor(cursor: JSONCursor(ArraySlice(body), file: "request"), shape: shape)
        var found = false
        try cursor.beginObject("an object \(shape)")
        var keys: [String] = []
        while let key = try cursor.nextKey(&keys) {
            if key == name {
                found = true
                try read(&cursor)
            } else {
                try cursor.syntax { (cursor: inout JSONCursor) throws(DataError) in try cursor.skipValue() }
            }
        }
        try cursor.syntax { (cursor: inout JSONCursor) throws(DataError) in try cursor.end() }
        guard found else { throw ServeAPI.Failure(.badRequest, "the body is not \(shape): it has no \"\(name)\" member") }
    }

    mutating func beginObject(_ what: String) throws(ServeAPI.Failure) {
        try syntax { (cursor: inout JSONCursor) throws(DataError) in try cursor.beginObject(what) }
    }

    mutating func nextKey(_ keys: inout [String], expecting expected: [String] = []) throws(ServeAPI.Failure) -> String? {
        try syntax { (cursor: inout JSONCursor) throws(DataError) in try cursor.nextKey(&keys, expecting: expected) }
    }

    mutating func beginArray(_ what: String) throws(ServeAPI.Failure) {
        try syntax { (cursor: inout JSONCursor) throws(DataError) in try cursor.beginArray(what) }
    }

    mutating func nextElement(after read: Int) throws(ServeAPI.Failure) -> Bool {
        try syntax { (cursor: inout JSONCursor) throws(DataError) in try cursor.nextElement(after: read) }
    }

    mutating func number(_ what: @autoclosure () -> String) throws(ServeAPI.Failure) -> Double {
        try syntax { (cursor: inout JSONCursor) throws(DataError) in try cursor.number(what()) }
    }

    /// One point's numbers, `[x, y]` or `[x, y, t]`, and how many it has: the first three are kept (0 for those
    /// not given), and every number is read.
    mutating func point() throws(ServeAPI.Failure) -> (numbers: (x: Double, y: Double, t: Double), read: Int) {
        try beginArray("a point [x, y] or [x, y, t]")
        var numbers = (x: 0.0, y: 0.0, t: 0.0)
        var read = 0
        while try nextElement(after: read) {
            let value = try number("a number")
            switch read {
            case 0: numbers.x = value
            case 1: numbers.y = value
            case 2: numbers.t = value
            default: break
            }
            read += 1
        }
        return (numbers, read)
    }

    /// `step` on the cursor, its syntax error as the 400 of this body.
    private mutating func syntax<T>(_ step: (inout JSONCursor) throws(DataError) -> T) throws(ServeAPI.Failure) -> T {
        do {
            return try step(&cursor)
        } catch {
            throw ServeAPI.Failure(.badRequest, "the body is not \(shape): \(error)")
        }
    }
}

/// The columns of JSON samples: the first sample's keys, sorted, and where each sample's values go in them. A
/// sample's keys are looked up once per run of samples written with the same keys (every sample, as a rule).
struct SampleColumns: Sendable {
    /// The column names, sorted.
    let header: [String]
    private let index: [String: Int]
    private var previousKeys: [String] = [], order: [Int] = []

    /// The columns of a first sample with `keys`.
    init(keys: [String]) {
        header = keys.sorted()
        index = Dictionary(uniqueKeysWithValues: header.enumerated().map { ($1, $0) })
    }

    /// Sample `i`'s values (in the order of its `keys`, which the reader holds to one each) appended to `row` in the
    /// header's order; `ServeAPI.keysProblem` unless its keys are the header's.
    mutating func append(_ keys: [String], _ values: [Double], sample i: Int, to row: inout [Double]) throws(DataError) {
        guard keys.count == header.count else { throw ServeAPI.keysProblem(i, keys, header) }
        if keys != previousKeys {
            var order: [Int] = []
            order.reserveCapacity(keys.count)
            for key in keys {
                guard let column = index[key] else { throw ServeAPI.keysProblem(i, keys, header) }
                order.append(column)
            }
            (previousKeys, self.order) = (keys, order)
        }
        // As many keys as columns, each once and each a column: every column is given.
        let start = row.count
        row.append(contentsOf: repeatElement(0, count: header.count))
        for (column, value) in zip(order, values) { row[start + column] = value }
    }
}

/// A request's JSON samples as the records of a recording file (`ServeAPI.records(fromJSON:)`), for the one reader
/// of recordings: `header` the columns, each sample a row of numbers in their order; errors name sample `i` as line
/// `i + 2` of "request (samples[i] is line i+2)", the header being line 1, as its CSV would have them.
struct SampleRecords: RecordReader {
    let file = "request (samples[i] is line i+2)"
    let header: [String]
    /// The rows laid end to end.
    let values: [Double]
    private var row = -1

    init(header: [String], values: [Double]) {
        precondition(!header.isEmpty && values.count % header.count == 0, "SampleRecords: \(values.count) values for \(header.count) columns")
        (self.header, self.values) = (header, values)
    }

    var lineNumber: Int { row + 2 }

    /// How many rows there are.
    var count: Int { values.count / header.count }

    mutating func advance() -> Bool {
        guard row + 1 < count else { return false }
        row += 1
        return true
    }

    func number(column index: Int) -> Double {
        precondition(row >= 0 && index >= 0 && index < header.count, "SampleRecords: column \(index) of row \(row), \(header.count) columns")
        return values[row * header.count + index]
    }
}
#endif
