import Foundation
import FuzzSupport

@testable import DataFiles
@testable import Models

// One drawing CSV (`classify shape FILE`) through the whole recognition path: the CSV reader, the drawing
// reader, then every link of the shipped fallback chain (int8, f32, geometric), each answer checked. Beside it the
// CSV reader checks itself: its three ways of reading a record (strings, in place, numbers straight from the bytes)
// must agree.

private let input = InputFile("drawing")
private let recognizers: [ShapeRecognizer] = {
    var chain = ["shape-classifier.int8", "shape-classifier.f32"].map { variant in
        do {
            return ShapeRecognizer(engine: .model(try ShapeClassifier(file: shippedModel(variant))), model: variant)
        } catch {
            fatalError("the shipped \(variant) is not a shape classifier: \(error)")
        }
    }
    chain.append(ShapeRecognizer.ruleOnly)
    return chain
}()

@main
enum FuzzDrawing {
    static func main() { exit(runFuzzer(fuzzDrawing)) }
}

/// libFuzzer's test function: one input, any bytes.
func fuzzDrawing(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let path = input.write(data, size)
    checkCSVReader(path)
    let drawing: Drawing
    do {
        drawing = try DrawingReader.read(path)
    } catch {
        requireInputError(error, path: path)
        return 0
    }
    require(drawing.pointCount > 0 && drawing.strokes.allSatisfy { !$0.isEmpty }, "a drawing with an empty stroke or no points")
    for recognizer in recognizers {
        do {
            requireSane(try recognizer.recognize(drawing), from: recognizer)
        } catch {
            // Only a drawing no recognizer can see is refused, and every link refuses it alike.
            require(ShapeRecognizer.problem(with: drawing) == error.message, "\(recognizer.model) refused a drawing: \(error)")
        }
    }
    return 0
}

/// What reading a file record by record gives: each record's fields, then the error that stopped it (if any).
private struct Reading: Equatable {
    var records: [[String]] = []
    var error: String?
}

/// The CSV reader's ways of reading `path` must agree with each other.
private func checkCSVReader(_ path: String) {
    var strings = Reading(), inPlace = Reading()
    var reader: CSVReader
    do {
        reader = try CSVReader(path: path)
    } catch {
        requireInputError(error, path: path)
        return
    }
    var second = reader
    do {
        while let fields = try reader.next() { strings.records.append(fields) }
    } catch {
        requireInputError(error, path: path)
        strings.error = error.description
    }
    do {
        while try second.advance() {
            let fields = second.header.indices.map(second.field)
            inPlace.records.append(fields)
            for (column, field) in fields.enumerated() {
                // The fast decimal path and Double(String) give the same number, or the same error.
                let fast = Result { () throws(DataError) in try second.number(column: column) }
                let slow = Result { () throws(DataError) in try second.number(field, column: column) }
                switch (fast, slow) {
                case let (.success(a), .success(b)):
                    require(a.bitPattern == b.bitPattern, "'\(field)': number(column:) \(a), number(_:column:) \(b)")
                case let (.failure(a), .failure(b)):
                    require(a == b, "'\(field)': \(a) / \(b)")
                default:
                    require(false, "'\(field)': number(column:) \(fast), number(_:column:) \(slow)")
                }
            }
        }
    } catch {
        inPlace.error = error.description
    }
    require(strings == inPlace, "next() and advance() read the file differently:\n\(strings)\n\(inPlace)")
}
