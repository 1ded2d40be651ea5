/// Why input data (a CSV file, a drawing, a recording) cannot be used: where, and what was expected.
public struct DataError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file, or `-` for standard input.
    public let file: String
    /// 1-based line, when the problem is on one.
    public let line: Int?
    /// 1-based column and its header name, when the problem is in one field.
    public let column: (index: Int, name: String)?
    /// What is wrong and what was expected.
    public let message: String
    /// Whether the file itself is missing (exit 66) rather than wrong (exit 65), or unreadable (74).
    public let kind: Kind

    /// The broad kind of problem, for exit codes.
    public enum Kind: Sendable, Equatable {
        /// The content is wrong.
        case invalid
        /// No such file.
        case missingFile
        /// The operating system could not read it.
        case unreadable
    }

    /// Creates the error.
    public init(file: String, line: Int? = nil, column: (index: Int, name: String)? = nil, message: String, kind: Kind = .invalid) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.kind = kind
    }

    /// `file:line: column 4 (x): message`.
    /// `FILE:LINE: column N (NAME): MESSAGE`, safe to print on a terminal: a control character that came from the
    /// data (an escape sequence in a field, a file name, a column name) is shown as `?`, so an error never drives
    /// the terminal or breaks a line.
    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        if let column { location += ": column \(column.index) (\(column.name))" }
        return Self.terminalSafe("\(location): \(message)")
    }

    /// `text` with every control character (C0, DEL, C1) as `?`.
    package static func terminalSafe(_ text: String) -> String {
        // Printable ASCII, what nearly every id is, needs no look at Unicode's tables (a batch prints one per line).
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
        guard text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : $0 }))
    }

    /// Equal files, places, kinds and messages.
    public static func == (lhs: DataError, rhs: DataError) -> Bool {
        lhs.file == rhs.file && lhs.line == rhs.line && lhs.column?.index == rhs.column?.index
            && lhs.column?.name == rhs.column?.name && lhs.message == rhs.message && lhs.kind == rhs.kind
    }
}
