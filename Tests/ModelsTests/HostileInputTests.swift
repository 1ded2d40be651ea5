import DataFiles
import Foundation
import Tensor
import Testing

@testable import Models

/// Files and drawings a hostile or careless user gives the readers and recognizers (issue 12): each is read
/// right or refused with a precise error, and nothing traps.
@Suite("Hostile input: byte-order marks, line endings, coordinate range, degenerate drawings, resampling")
struct HostileInputTests {
    /// This test's files, removed after it.
    let files = TestFiles("hostile-tests")

    func write(_ text: String, named name: String = "hostile") throws -> String {
        let url = files.folder.appendingPathComponent("\(name)-\(UUID().uuidString).csv")
        try Data(text.utf8).write(to: url)
        return url.path
    }

    static let square = "stroke,x,y\n0,0,0\n0,10,0\n0,10,10\n0,0,10\n1,5,5\n"

    /// Rows of a raw-accelerometer recording with timestamps `spacing` s apart.
    static func recording(spacing: Double, count: Int) -> String {
        "timestamp,acc.x,acc.y,acc.z\n"
            + (0..<count).map { String(format: "%.3f,0,%.3f,-1", Double($0) * spacing, 0.5 * sin(Double($0))) }
            .joined(separator: "\n") + "\n"
    }

    @Test func aByteOrderMarkIsSkippedByEveryReader() throws {
        let plain = try DrawingReader.read(try write(Self.square))
        let marked = try DrawingReader.read(try write("\u{FEFF}" + Self.square))
        #expect(marked == plain)
        #expect(marked.strokes.count == 2, "the first column, stroke, is found behind the mark")
        let drawing = try DrawingReader.read(try write("\u{FEFF}x,y\n0,0\n1,0\n1,1\n"))
        #expect(drawing.pointCount == 3)

        let recording = try MotionRecordingReader.read(try write("\u{FEFF}" + Self.recording(spacing: 0.04, count: 300)))
        #expect(recording.assumedRate == nil, "the timestamp column is found behind the mark")
        #expect(recording.sourceRate.map { abs($0 - 25) < 1e-6 } == true, "\(String(describing: recording.sourceRate))")
        // Only at the very start: elsewhere it is text, and a column named with it is not the column.
        let inside = try CSVReader(path: try write("a,\u{FEFF}b\n1,2\n"))
        #expect(inside.header == ["a", "\u{FEFF}b"])
    }

    @Test func lfCrlfAndCrLineEndingsReadAlike() throws {
        let drawings = try ["\n", "\r\n", "\r"].map { end in
            try DrawingReader.read(try write(Self.square.replacingOccurrences(of: "\n", with: end)))
        }
        #expect(drawings[1] == drawings[0] && drawings[2] == drawings[0])
        #expect(drawings[2].pointCount == 5 && drawings[2].strokes.count == 2)

        let text = Self.recording(spacing: 0.02, count: 400)
        let recordings = try ["\n", "\r\n", "\r"].map { end in
            try MotionRecordingReader.read(try write(text.replacingOccurrences(of: "\n", with: end)))
        }
        for recording in recordings.dropFirst() {
            #expect(recording.segments.map(\.count) == recordings[0].segments.map(\.count))
            #expect(recording.sourceRate == recordings[0].sourceRate)
        }
        // Errors name the right line whatever ends the lines (a blank line counts).
        for end in ["\n", "\r\n", "\r"] {
            let path = try write(["x,y", "0,0", "", "1,zero", "2,2"].joined(separator: end) + end)
            #expect(throws: DataError(file: path, line: 4, column: (2, "y"), message: "'zero' is not a number")) {
                try DrawingReader.read(path)
            }
        }
    }

    @Test func coordinatesOutsideTheRangeAreRefusedWithTheirPlace() throws {
        for value in ["1e300", "-1e300", "1e16", "-2e15"] {
            let path = try write("x,y\n0,0\n1,\(value)\n2,2\n")
            #expect(
                throws: DataError(
                    file: path, line: 3, column: (2, "y"),
                    message: "\(Double(value) ?? 0) is outside the coordinate range ±1e15; coordinates are screen positions (any unit and offset)")
            ) {
                try DrawingReader.read(path)
            }
        }
        let edge = try DrawingReader.read(try write("x,y\n-1e15,0\n1e15,1e15\n0,1e15\n"))
        #expect(ShapeRasterizer.shipped.problem(with: edge) == nil)
    }

    /// Drawings at the edges of `Double` — denormal and zero spans, spans of 1e10 against 1e-300, extreme aspect
    /// ratios, the largest finite values — through the problem check, both rasterizers and the geometric
    /// recognizer: an answer or a precise problem, never a trap, and the fast rasterizer still the reference's twin.
    @Test(arguments: [
        [(0.0, 0.0), (1e-320, 0)], [(0, 0), (1e10, 0)], [(0, 0), (1e10, 1e-300)], [(0, 0), (5e-324, 5e-324), (1e-320, 0)],
        [(0, 0), (1e15, 0), (1e15, 1e-5), (0, 1e-5)], [(0, 0), (1, 0), (1, 1e-300), (0, 1e-300)], [(-1e15, -1e15), (1e15, 1e15), (1e15, -1e15)],
        [(1.7e308, 0), (-1.7e308, 1), (0, 1.7e308)], [(0, 0), (.nan, 1), (1, 1)], [(0, 0), (.infinity, 1), (1, 1)],
        [(1e-200, 0), (0, 1e-200), (1e-200, 1e-200), (0, 0)], [(1e14, 1e14), (1e14 + 0.125, 1e14), (1e14, 1e14 + 0.125)],
    ])
    func degenerateDrawingsNeverTrap(points: [(Double, Double)]) throws {
        let drawing = Drawing(strokes: [points.map { DrawingPoint(x: $0.0, y: $0.1) }])
        let rasterizer = ShapeRasterizer.shipped
        let problem = rasterizer.problem(with: drawing)
        let fast = rasterizer.rasterize(drawing).scalars
        let reference = rasterizer.rasterizeReference(drawing).scalars
        if problem == nil {
            #expect(fast == reference, "fast and reference images differ for \(points)")
            #expect(fast.allSatisfy { $0 >= 0 && $0 <= 1 } && fast.contains { $0 > 0 })
        }
        let geometric = ShapeRecognizer.ruleOnly
        do {
            let answer = try geometric.recognize(drawing)
            #expect(problem == nil)
            #expect(answer.probabilities.allSatisfy { $0.probability.isFinite } && answer.confidence.isFinite)
        } catch {
            #expect(problem.map { error.message == $0 } == true, "\(error.message)")
        }
        if let measures = try? GeometricRecognizer().measure(drawing) {
            #expect(measures.pathOverHull.isFinite && measures.rectangularity.isFinite && measures.solidity.isFinite)
        }
    }

    @Test func theGeometricRecognizerSeesASquareAtAnyScale() throws {
        for (side, offset) in [(1e-170, 0.0), (1e-100, 1e-95), (1, 0), (1e12, -1e14)] {
            let square = Drawing(strokes: [
                [(0.0, 0.0), (1, 0), (1, 1), (0, 1), (0, 0)].map {
                    DrawingPoint(x: offset + $0.0 * side, y: offset + $0.1 * side)
                }
            ])
            let measures = try GeometricRecognizer().measure(square)
            #expect(abs(measures.rectangularity - 1) < 1e-6 && abs(measures.pathOverHull - 1) < 1e-6, "side \(side): \(measures)")
            #expect(try GeometricRecognizer().classify(square).label == "square")
        }
    }

    @Test func resamplingIsBoundedByTheInput() throws {
        // Every other sample 2.5 s after the last (gaps short enough to bridge at a 256-sample window): the median
        // rate is 50 Hz, yet interpolation would make 63 samples per row.
        var rows = ["timestamp,acc.x,acc.y,acc.z"], time = 0.0
        for i in 0..<400 {
            rows.append(String(format: "%.3f,0,%.3f,-1", time, 0.5 * sin(Double(i))))
            time += i % 2 == 0 ? 0.02 : 2.5
        }
        let path = try write(rows.joined(separator: "\n") + "\n")
        #expect(throws: DataError.self) { try MotionRecordingReader.read(path, window: 256) }
        do {
            _ = try MotionRecordingReader.read(path, window: 256)
        } catch {
            // 501.5 s at 50 Hz.
            #expect(error.message.hasPrefix("resampling to 50 Hz would make 25076 samples of 400 (more than 10 per sample)"), "\(error.message)")
        }
        // The count checked is the count made: a 10 Hz recording with a bridged gap and a split.
        var times = (0..<300).map { Double($0) * 0.1 }
        times += (0..<50).map { 31.5 + Double($0) * 0.1 }
        times += (0..<50).map { 60 + Double($0) * 0.1 }
        let values = times.map { _ in [0, 0, -1, 0, 0, 0, 0, 0, 0.0] }
        let recording = try MotionRecordingReader.assemble(values, times: times, coreMotion: false, rate: 50, window: 128)
        #expect(Double(recording.segments.map(\.count).reduce(0, +)) == MotionRecordingReader.resampledCount(times, rate: 50, window: 128))
        #expect(recording.segments.count == 2)
    }

    @Test func samplesCloserThanAnySensorTakesThemAreRefused() throws {
        // 0.02 s written as days (a spreadsheet's date serial): 2.3e-7 apart.
        let days = try write(
            "timestamp,acc.x,acc.y,acc.z\n"
                + (0..<400).map { String(format: "%.12f,0,%.3f,-1", Double($0) * 0.02 / 86_400, sin(Double($0))) }
                .joined(separator: "\n"))
        #expect(
            throws: DataError(
                file: days,
                message: "the samples are 2.31e-07 s apart (median): 4.32e+06 Hz, faster than any phone's motion "
                    + "sensors; the highest rate accepted is 10000 Hz. The timestamps look like days, as a spreadsheet's dates "
                    + "count them (50 Hz if multiplied by 86400): the timestamp column must be in seconds")
        ) {
            try MotionRecordingReader.read(days)
        }
        // (An assumed rate above the limit: MotionStillAndRateTests.)
        let header = try write("timestamp,acc.x,acc.y,acc.z\r\n")
        #expect(throws: DataError(file: header, line: 2, message: "no samples: the file has a header but no rows")) {
            try MotionRecordingReader.read(header)
        }
    }

    @Test func emptyAndHeaderOnlyFilesAndNonNumbersArePrecise() throws {
        let empty = try write("")
        #expect(throws: DataError(file: empty, line: 1, message: "the file is empty; expected a header row of column names")) {
            try DrawingReader.read(empty)
        }
        let bomOnly = try write("\u{FEFF}\r\n")
        #expect(throws: DataError(file: bomOnly, line: 1, message: "the file is empty; expected a header row of column names")) {
            try MotionRecordingReader.read(bomOnly)
        }
        let header = try write("x,y\r")
        #expect(throws: DataError(file: header, line: 2, message: "no points: the file has a header but no rows")) {
            try DrawingReader.read(header)
        }
        // A header of 400,000 empty names: the message names 20 and counts the rest.
        let wide = try write(String(repeating: ",", count: 399_999) + "\n")
        #expect(
            throws: DataError(
                file: wide, line: 1,
                message: "missing column 'x'; the header has "
                    + Array(repeating: "''", count: 20).joined(separator: ", ") + " and 399980 more")
        ) {
            try DrawingReader.read(wide)
        }
        for text in ["nan", "inf", "-infinity", "1e999"] {
            let path = try write("x,y\n0,0\n\(text),1\n")
            #expect(throws: DataError.self) { try DrawingReader.read(path) }
        }
    }
}
