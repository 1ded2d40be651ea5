import Foundation
import Testing

/// The README's table of `--json` keys and its table of exit codes, checked against what the commands do: every
/// key a command prints is in its row, every key in a row is printed by one of the runs here, and every exit
/// code's example command, run as the README writes it, exits with that code.
@Suite("README: JSON keys and exit codes")
struct ReadmeContractTests {
    /// The rows of the README table whose header row starts with `| header |`: each row's cells, trimmed.
    func table(_ header: String) throws -> [[String]] {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("| \(header) |") }, "no table '| \(header) |' in README.md")
        return lines[(start + 2)...].prefix { $0.hasPrefix("|") }.map { row in
            row.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast().map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    /// The top-level keys a row of the JSON table names: the backticked words outside parentheses (inside them are
    /// nested keys and values).
    func keys(_ cell: String) -> Set<String> {
        var depth = 0, outside = ""
        for character in cell {
            if character == "(" { depth += 1 } else if character == ")" { depth = max(0, depth - 1) } else if depth == 0 { outside.append(character) }
        }
        return Set(outside.matches(of: /`([A-Za-z][A-Za-z0-9]*)`/).map { String($0.1) })
    }

    /// The top-level keys of each JSON line of `run`'s standard output (or of its one object, `inspect`'s, printed
    /// over several lines).
    func printedKeys(_ run: CommandRun) throws -> [Set<String>] {
        if let object = try? JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any] { return [Set(object.keys)] }
        return try run.standardOutput.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            return Set(object.keys)
        }
    }

    @Test func everyJSONKeyIsInTheTableAndEveryKeyInTheTableIsPrinted() throws {
        let rows = Dictionary(try table("output").map { ($0[0], keys($0[1])) }, uniquingKeysWith: { first, _ in first })
        let walking = try String(contentsOf: packageRoot.appendingPathComponent("Datasets/examples/walking.csv"), encoding: .utf8)
        // The walking example, then 70 s without samples, then the same again: a pause and a resumption.
        let body = walking.split(separator: "\n").dropFirst()
        let later = body.map { row -> String in
            let fields = row.split(separator: ",", omittingEmptySubsequences: false)
            return "\((Double(fields[0]) ?? 0) + 100)," + fields.dropFirst().joined(separator: ",")
        }
        let paused = walking + later.joined(separator: "\n") + "\n"
        let runs: [(row: String, arguments: [String], input: String?, sometimes: Set<String>)] = [
            ("`classify shape`", ["shape", "Datasets/examples/star.csv", "--json"], nil, []),
            ("`classify shape`", ["shape", "Datasets/examples/other.csv", "Datasets/examples/star.csv", "--json"], nil, []),
            ("`classify motion`", ["motion", "Datasets/examples/walking.csv", "Datasets/examples/still.csv", "--json"], nil, ["reason"]),
            ("`classify motion --follow`", ["motion", "--follow", "-", "--json"], paused, []),
            ("an input with no answer", ["shape", "no-such-drawing.csv", "--json"], nil, []),
            ("`classify evaluate`", ["evaluate", "shape", "--data", "Datasets/shapes/test.csv", "--json"], nil, []),
            ("`classify inspect`", ["inspect", "Weights/shape-classifier.int8.weights", "--json"], nil, []),
        ]
        var seen: [String: Set<String>] = [:], sometimes: [String: Set<String>] = [:]
        for run in runs {
            let documented = try #require(rows[run.row], "README.md has no JSON row \(run.row)")
            let result = try CommandRun.classifyAtRoot(run.arguments, input: run.input)
            let printed = try printedKeys(result)
            #expect(!printed.isEmpty, "\(run.arguments): \(result.standardError)")
            for keys in printed {
                #expect(keys.isSubset(of: documented), "\(run.arguments) prints \(keys.subtracting(documented).sorted()), not in README.md")
                seen[run.row, default: []].formUnion(keys)
            }
            sometimes[run.row, default: []].formUnion(run.sometimes)
        }
        for (row, documented) in rows {
            let missing = documented.subtracting(seen[row, default: []]).subtracting(sometimes[row, default: []])
            #expect(missing.isEmpty, "README.md documents \(missing.sorted()) for \(row), which no run printed")
        }
        #expect(seen["`classify motion --follow`"].map { $0.contains("pausedAt") } == true, "no resumption in the followed recording")
    }

    @Test func everyExitCodeIsWhatItsExampleExitsWith() throws {
        let rows = try table("exit")
        #expect(rows.map(\.[0]) == ["0", "64", "65", "66", "70", "74"])
        for row in rows {
            let code = try #require(Int32(row[0]))
            let command = try #require(row[2].firstMatch(of: /`classify ([^`]*)`/).map { String($0.1) }, "\(row)")
            let quotedBinary = "'" + CommandRun.builtClassify.path.replacingOccurrences(of: "'", with: "'\\''") + "'"
            let run = try CommandRun.run(
                URL(fileURLWithPath: "/bin/sh"), ["-c", "\(quotedBinary) \(command)"], directory: packageRoot)
            #expect(run.status == code, "classify \(command): exit \(run.status), README.md says \(code); \(run.standardError)")
            #expect(code == 0 || run.standardError.contains("rror"), "classify \(command) says nothing: \(run.standardError)")
        }
    }
}
