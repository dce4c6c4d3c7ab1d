"""The command line's ``testsuite`` actions (``python -m analysis testsuite judge|review|report``): judge a
system's outputs with a suite's rules, review the warnings by hand, and report accuracy per phenomenon with its
significance clusters."""

from __future__ import annotations

import sys

from analysis.data.reading import read_csv_as
from analysis.io import output_file, write_atomic
from analysis.testsuite import breakdowns as suite_tables
from analysis.testsuite import suite as testsuite


def run(args) -> None:
    """Carry out the action that ``args`` (the command line's parsed ``testsuite`` arguments) names."""
    if args.action == "judge":
        demo = dict(zip(("rules", "outputs"), testsuite.demo_paths()))
        rules, outputs = (demo[flag] if getattr(args, flag) == "demo" else getattr(args, flag) for flag in demo)
        out = output_file(args.out, inputs=[rules, outputs])
        table = testsuite.judge_all(testsuite.load_rules(rules), testsuite.load_outputs(outputs))
        write_atomic(out, table.to_csv(index=False))
        skipped = ", ".join(f"{n} {why}" for why, n in table.attrs["not_scored"].items() if n)
        print(f"wrote {len(table)} judgements ({len(testsuite.judged(table))} scored) to {args.out}"
              + (f"; not scored: {skipped}" if skipped else ""), file=sys.stderr)
    elif args.action == "review":
        table = testsuite.check_judgements(read_csv_as(args.judgements, "judgements", dtype=str,
                                                       keep_default_na=False), args.judgements)
        if args.turn == "export":
            rules = testsuite.demo_paths()[0] if args.rules == "demo" else args.rules
            out = output_file(args.out, inputs=[args.judgements, rules])
            done = testsuite.export_warnings(table, testsuite.load_rules(rules), out)
            kept = f", and {done['other']} earlier reviews of other outputs" if done["other"] else ""
            print(f"wrote {done['warnings']} warnings to {args.out} ({done['reviewed']} reviewed){kept}; fill its "
                  "review column with pass or fail, then run 'testsuite review apply'", file=sys.stderr)
        else:
            reviews = testsuite.demo_reviews() if args.reviews == "demo" else args.reviews
            out = output_file(args.out, inputs=[args.judgements, reviews])
            reviewed = testsuite.apply_reviews(table, reviews)
            write_atomic(out, reviewed.to_csv(index=False))
            done = reviewed.attrs["reviews"]
            print(f"applied {done['applied']} reviews to {args.out}; {done['not applied']} not applied (their output "
                  f"is no longer a warning, or changed); {(reviewed['judgement'] == 'warning').sum()} warnings left",
                  file=sys.stderr)
    else:
        table = read_csv_as(args.judgements, "judgements", dtype={"item_id": str})
        testsuite.check_judgements(table, args.judgements)
        rest = testsuite.not_scored(table)
        why = "; ".join(f"{n} {judgement} ({reason})" for (judgement, reason), n in rest.items())
        print(f"{len(table)} outputs: {len(table) - int(rest.sum())} scored, {int(rest.sum())} not scored"
              + (f": {why}" if why else ""))
        table = testsuite.without_systems(table, args.exclude_systems)
        left_out = f"; left out: {', '.join(args.exclude_systems)}" if args.exclude_systems else ""
        print(f"Analysis {args.analysis}{left_out}; accuracy in %; first significance cluster (Z-test, alpha 0.05) "
              "in **bold**")
        if args.by in ("tense", "verb-type"):
            verbs = suite_tables.verb_table(table, args.analysis, args.by.replace("-", " "))
            print(verbs.to_string() if len(verbs) else
                  f"no scored phenomenon of {suite_tables.VERB_CATEGORY!r} names a {args.by.replace('-', ' ')}")
        else:
            print(testsuite.cluster_table(table, args.analysis, args.by).to_string())
        if args.by == "category":
            counted = suite_tables.decisive(table, args.analysis)
            print("First significance cluster in N of M decisive categories (where the Z-test leaves some system "
                  "out): " + ", ".join(f"{s} {n} of {m}" for s, (n, m) in counted.iterrows()))
