import DataFiles
import Datasets
import Foundation
import Models
import Tensor
import WeightsFormat

/// Input tensors for `run`, handed over one at a time: the rows of a CSV file of numbers (or standard input), or of
/// a `.npy` file, read as they are needed, in bounded memory; or rows already in memory (a dataset's, or those
/// `--save-inputs` writes).
struct InputRows {
    /// The file the rows come from, for errors.
    let file: String
    /// Whether reading a row may wait for its writer (a pipe, a terminal, a FIFO): whoever prints an answer per row
    /// flushes it before reading on, so that it is seen while the input is still being written.
    let mayWait: Bool
    /// Rows handed over so far: the last one is input `count`.
    private(set) var count = 0
    private var csv: CSVReader?
    private var npy: NPYRows?
    private var rows: [[Float]] = []

    /// The rows of `path` (`-` is standard input), each an input of `size` values: a `.npy` file of float32, or a
    /// CSV file without a header, one input per row. Nothing but the `.npy` header is read yet.
    init(path: String, size: Int) throws(DataError) {
        file = path
        if path.lowercased().hasSuffix(".npy") {
            npy = try NPYRows(path: path, size: size)
            mayWait = false
        } else {
            csv = try CSVReader(
                path: path, headerless: CSVReader.Headerless(fields: size, name: "value", reason: "the model's input has \(size)"))
            var status = stat()
            let found = path == "-" ? fstat(0, &status) : stat(path, &status)
            mayWait = found != 0 || status.st_mode & S_IFMT != S_IFREG
        }
    }

    /// `rows`, already read from `file`.
    init(rows: [[Float]], file: String) {
        (self.rows, self.file, mayWait) = (rows, file, false)
    }

    /// The line the last row was read from, in a CSV file.
    var line: Int? { csv?.lineNumber }

    /// Reads the next input into `row` (which has the input's size), or returns `false` after the last. A value that
    /// is not a finite float32, a row of another size, or a file with no rows at all is an error naming the file, the
    /// line (CSV) or input, and the value's column.
    mutating func next(into row: inout [Float]) throws(DataError) -> Bool {
        let found: Bool
        if var reader = csv {
            csv = nil  // `reader` is then the only reference: its buffer is not copied
            defer { csv = reader }
            found = try Self.readRow(&reader, into: &row)
        } else if var reader = npy {
            npy = nil
            defer { npy = reader }
            found = try reader.next(into: &row)
        } else if count < rows.count {
            row = rows[count]
            found = true
        } else {
            found = false
        }
        if found {
            count += 1
        } else if count == 0 {
            throw DataError(file: file, message: "no inputs: the file has no rows")
        }
        return found
    }

    /// One CSV row as float32 values.
    private static func readRow(_ reader: inout CSVReader, into row: inout [Float]) throws(DataError) -> Bool {
        guard try reader.advance() else { return false }
        for column in row.indices {
            let value = Float(try reader.number(column: column))
            guard value.isFinite else {
                throw DataError(
                    file: reader.file, line: reader.lineNumber, column: (column + 1, "value"),
                    message: "\(reader.field(column).trimmingCharacters(in: .whitespaces).prefix(40)) is beyond float32's range (±3.4028235e38)")
            }
            row[column] = value
        }
        return true
    }
}

/// Input tensors for `run` held whole (for `--save-inputs`, or made from a dataset), and the arithmetic of shapes.
enum InputTensors {
    /// Every input of `path` (see `InputRows`), for `--save-inputs`, which writes them before any runs.
    static func read(_ path: String, size: Int) throws(DataError) -> [[Float]] {
        var inputs = try InputRows(path: path, size: size)
        var row = [Float](repeating: 0, count: size)
        var rows: [[Float]] = []
        while try inputs.next(into: &row) { rows.append(row) }
        return rows
    }

    /// The inputs the model's preprocessing makes of a dataset: each drawing of a shape dataset rasterized, or
    /// each window of each session of a motion dataset; a drawing or session that cannot be used is an error.
    static func preprocessed(_ path: String, for file: ModelFile) throws(DataError) -> [[Float]] {
        switch file.preprocessingKind {
        case .raster?, .gestureTemplates?:
            let preprocessing = try ShapePreprocessing(parameters: file.preprocessing)
            let items = try ShapeDataset.drawings(path, threads: 1) { { $0 } }
            let size = preprocessing.inputShape.reduce(1, *)
            var rows: [[Float]] = []
            for item in items {
                let drawing = try item.value.drawing.get()
                if let problem = ShapeRecognizer.problem(with: drawing) {
                    throw DataError(file: path, line: item.lines.lowerBound, message: "drawing '\(item.id)': \(problem)")
                }
                rows.append(
                    [Float](unsafeUninitializedCapacity: size) { buffer, count in
                        buffer.initialize(repeating: 0)
                        preprocessing.input(for: drawing, into: buffer)
                        count = size
                    })
            }
            return rows
        case .motionAutocorrelation?:
            let windowing = try MotionWindowing(parameters: file.preprocessing)
            var rows: [[Float]] = []
            for session in try MotionDataset.sessions(path, rate: windowing.rate, window: windowing.window) {
                for segment in try session.recording.get().segments where segment.count >= windowing.window {
                    let windows = windowing.windows(segment)
                    let size = windowing.inputSize
                    for index in 0..<windows.shape[0] { rows.append(Array(windows.scalars[(index * size)..<((index + 1) * size)])) }
                }
            }
            guard !rows.isEmpty else { throw DataError(file: path, message: "no session holds a whole window of \(windowing.window) samples") }
            return rows
        case nil:
            throw DataError(
                file: path,
                message: "the model's preprocessing \(file.preprocessing["kind"].map { "\($0)" } ?? "(none)") makes no inputs from a dataset")
        }
    }

    /// The shape `--save-inputs` gives each input of a model whose input is `shape`: the one `export onnx` declares,
    /// so that the file runs in another runtime as it is. A one-channel image `[H, W, 1]` is `[1, H, W]` (NCHW: the
    /// same bytes); any other input keeps its shape (an image of several channels would need its values reordered).
    static func savedShape(of shape: [Int]) -> [Int] {
        shape.count == 3 && shape[2] == 1 ? [1, shape[0], shape[1]] : shape
    }
}
