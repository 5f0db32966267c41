package ddl

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/shoaldb/shoal/sql/executor"
)

// exprText prints an expression of a generated column, CHECK constraint
// or expression default the way MySQL 8 prints it in SHOW CREATE TABLE
// and information_schema (operators parenthesized, functions in lower
// case, strings with their character set introducer). The text is also
// what the catalog keeps: the parser reads it back for every statement
// that evaluates it.
func exprText(n ast.ExprNode) string {
	var b strings.Builder
	writeExpr(&b, n)
	return b.String()
}

var mysqlOpText = map[opcode.Op]string{
	opcode.LogicAnd: "and", opcode.LogicOr: "or", opcode.LogicXor: "xor",
	opcode.NE: "<>", opcode.IntDiv: "DIV", opcode.Mod: "%",
}

func writeExpr(b *strings.Builder, n ast.ExprNode) {
	switch x := n.(type) {
	case *ast.ParenthesesExpr:
		writeExpr(b, x.Expr)
	case *ast.ColumnNameExpr:
		b.WriteString(executor.QuoteIdent(x.Name.Name.O, true))
	case *driver.ValueExpr:
		if x.Kind() == driver.KindString {
			b.WriteString("_utf8mb4" + executor.QuoteString(x.GetString()))
			return
		}
		restoreExpr(b, n)
	case *ast.BinaryOperationExpr:
		op, ok := mysqlOpText[x.Op]
		if !ok {
			op = x.Op.String()
			if lit := opLiteral(x.Op); lit != "" {
				op = lit
			}
		}
		b.WriteString("(")
		writeExpr(b, x.L)
		b.WriteString(" " + op + " ")
		writeExpr(b, x.R)
		b.WriteString(")")
	case *ast.UnaryOperationExpr:
		switch x.Op {
		case opcode.Minus:
			b.WriteString("-(")
		case opcode.Not, opcode.Not2:
			b.WriteString("(not(")
			writeExpr(b, x.V)
			b.WriteString("))")
			return
		case opcode.BitNeg:
			b.WriteString("~(")
		default:
			b.WriteString("(")
		}
		writeExpr(b, x.V)
		b.WriteString(")")
	case *ast.IsNullExpr:
		b.WriteString("(")
		writeExpr(b, x.Expr)
		if x.Not {
			b.WriteString(" is not null)")
		} else {
			b.WriteString(" is null)")
		}
	case *ast.PatternInExpr:
		if x.Sel != nil {
			restoreExpr(b, n)
			return
		}
		b.WriteString("(")
		writeExpr(b, x.Expr)
		if x.Not {
			b.WriteString(" not in (")
		} else {
			b.WriteString(" in (")
		}
		writeList(b, x.List)
		b.WriteString("))")
	case *ast.BetweenExpr:
		b.WriteString("(")
		writeExpr(b, x.Expr)
		if x.Not {
			b.WriteString(" not between ")
		} else {
			b.WriteString(" between ")
		}
		writeExpr(b, x.Left)
		b.WriteString(" and ")
		writeExpr(b, x.Right)
		b.WriteString(")")
	case *ast.PatternLikeOrIlikeExpr:
		b.WriteString("(")
		writeExpr(b, x.Expr)
		if x.Not {
			b.WriteString(" not")
		}
		b.WriteString(" like ")
		writeExpr(b, x.Pattern)
		b.WriteString(")")
	case *ast.FuncCallExpr:
		if specialSyntax(x) {
			restoreExpr(b, n)
			return
		}
		b.WriteString(x.FnName.L + "(")
		writeList(b, x.Args)
		b.WriteString(")")
	case *ast.CaseExpr:
		b.WriteString("(case ")
		if x.Value != nil {
			writeExpr(b, x.Value)
			b.WriteString(" ")
		}
		for _, w := range x.WhenClauses {
			b.WriteString("when ")
			writeExpr(b, w.Expr)
			b.WriteString(" then ")
			writeExpr(b, w.Result)
			b.WriteString(" ")
		}
		if x.ElseClause != nil {
			b.WriteString("else ")
			writeExpr(b, x.ElseClause)
			b.WriteString(" ")
		}
		b.WriteString("end)")
	default:
		restoreExpr(b, n)
	}
}

func writeList(b *strings.Builder, list []ast.ExprNode) {
	for i, a := range list {
		if i > 0 {
			b.WriteString(",")
		}
		writeExpr(b, a)
	}
}

// opLiteral is the operator as SQL spells it (opcode's String gives its
// internal name).
func opLiteral(op opcode.Op) string {
	var sb strings.Builder
	if err := op.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &sb)); err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(sb.String()))
}

// restoreExpr prints what exprText has no MySQL form for as the parser
// restores it (names in backticks, keywords in lower case), which reads
// back as the same expression.
func restoreExpr(b *strings.Builder, n ast.ExprNode) {
	flags := format.RestoreStringSingleQuotes | format.RestoreKeyWordLowercase | format.RestoreNameBackQuotes | format.RestoreStringEscapeBackslash
	_ = n.Restore(format.NewRestoreCtx(flags, b))
}

// specialSyntax reports whether a call's arguments are not a plain list
// (DATE_ADD's INTERVAL, TRIM's BOTH ... FROM, GET_FORMAT, ...): the
// parser's restore spells those.
func specialSyntax(f *ast.FuncCallExpr) bool {
	for _, a := range f.Args {
		switch a.(type) {
		case *ast.TimeUnitExpr, *ast.TrimDirectionExpr, *ast.GetFormatSelectorExpr:
			return true
		}
	}
	return false
}
