/* mha front end, PORT of book/widgets/spec.py's rules: how a figure's settings change, checked as in Python.
 *
 * Python twins (book.widgets.spec): fill -> format, choices -> choicesOf (the rule "divisors" is
 * book.compute.explorer.head_choices), explorer_choices -> explorerChoices, next_valid -> nextValid, invalid ->
 * invalid, chosen_key -> chosenKey, merge_settings -> mergeSettings, follow_notes -> followNotes; and
 * book.widgets.frontend.ReaderInputError -> ReaderError. The
 * rules, choices, bounds and messages are the spec's (Python's), given with a figure's data; these functions
 * only apply them. Tested by tests/unit/book/widgets/test_spec.py (test_settings_*), in mini-racer, against
 * those functions on the cases of the browser tests; mergeSettings needs ports/explorer.js (splitTokens) when
 * called.
 *
 * A port: a classic script adding to globalThis.mhaFrontEnd, strict, no top-level binding, no DOM.
 */
(function (root) {
  "use strict";
  const ns = (root.mhaFrontEnd = root.mhaFrontEnd || {});

  /** A reader's input that cannot be drawn (ReaderInputError): the figure shows the message, it is no bug. */
  class ReaderError extends Error {}

  /** A value as a message shows it: JSON; a list's items joined by ", ". */
  function text(value) {
    if (typeof value === "string") return value;
    if (Array.isArray(value)) return value.map(text).join(", ");
    if (typeof value === "bigint") return value.toString();
    return value === undefined ? "null" : JSON.stringify(value);
  }

  /** A message from its template: "{name}" fields filled, "{name|one|many}" chosen by name === 1 (spec.fill). */
  function format(template, values) {
    const given = values || {};
    let out = template.replace(/\{(\w+)\|([^|{}]*)\|([^|{}]*)\}/g,
      (whole, key, one, many) => (key in given ? (Number(given[key]) === 1 ? one : many) : whole));
    for (const [key, value] of Object.entries(values || {})) out = out.split(`{${key}}`).join(text(value));
    return out;
  }

  const isInt = (v) => Number.isInteger(v);

  /** The values a control offers in a state: its choices, or those its rule gives (spec.choices). */
  function choicesOf(control, state) {
    if (control.rule === "divisors") {
      const limit = state[control.of], out = [];
      for (let k = 1; k <= Math.min(limit, control.hi); k++) if (limit % k === 0) out.push(k);
      return out;
    }
    if (control.rule === "upto") {
      const out = [];
      for (let k = control.lo; k <= state[control.of]; k++) out.push(k);
      return out;
    }
    return control.choices.map(([v]) => v);
  }

  /** What the explorer's menus offer in a state (spec.explorer_choices): the spec's choices; while a trained
   * model is shown (trained: its d_model and h), the widths with its own among them, and the divisors of its
   * width, or its own h if that is not one of them. */
  function explorerChoices(spec, state, trained) {
    const control = (name) => spec.controls.find((k) => k.name === name);
    const out = {};
    for (const name of ["source", "d_model", "h", "mask"]) out[name] = choicesOf(control(name), state);
    if (trained && state.source === "trained") {
      out.d_model = [...new Set([...out.d_model, trained.d_model])].sort((a, b) => a - b);
      const heads = choicesOf(control("h"), { d_model: trained.d_model });
      out.h = heads.includes(trained.h) ? heads : [trained.h];
    }
    return out;
  }

  /** The value a control moves to when old is no longer offered: the largest below it, else the first. */
  function nextValid(values, old) {
    const below = values.filter((v) => v <= old);
    return below.length ? Math.max(...below) : values[0];
  }

  /** The error of a value no control offers: the spec's message for its kind. */
  function invalid(spec, kind, fields) {
    return new RangeError(format(spec.messages.invalid[kind], fields));
  }

  /** Where a state keeps the value a reader chose for a setting that follows a sentence's length. */
  const chosenKey = (name) => `${name}_chosen`;

  /**
   * state with changes merged in, checked as the controls check them (spec.merge_settings): a setting that
   * depends on a changed one follows it; one that follows a sentence's length (rule "tokens") is the value
   * chosen, or the number of tokens while the sentence is shorter, and the state keeps the value chosen
   * (chosenKey; null: all the tokens). Throws RangeError (TypeError for a sentence that is no string) with
   * the spec's message; `fixed` holds settings the state does not let change.
   */
  function mergeSettings(spec, state, changes, fixed) {
    const controls = spec.controls.filter((c) => c.setting);
    const names = controls.map((c) => c.name);
    const unknown = Object.keys(changes).filter((k) => !names.includes(k)).sort();
    if (unknown.length) throw new RangeError(`unknown settings ${unknown.join(", ")}; the settings are ${names.join(", ")}`);
    fixed = fixed || {};
    const out = Object.assign({}, state);
    for (const control of controls) { // in the spec's order: a rule's setting comes before it
      const name = control.name, given = name in changes;
      if (name in fixed) {
        if (given && changes[name] !== fixed[name]) throw invalid(spec, "fixed", { name, fixed: fixed[name], value: JSON.stringify(changes[name]) });
        continue;
      }
      let value = given ? changes[name] : out[name];
      if (control.kind === "text") {
        if (typeof value !== "string") throw new TypeError(format(spec.messages.invalid.text, { name, value: JSON.stringify(value) }));
      } else if (control.rule === "tokens") {
        const n = ns.splitTokens(out[control.of]).length, memory = chosenKey(name);
        if (given) {
          if (value !== null && (!isInt(value) || value < 1 || (n && value > n))) throw invalid(spec, "tokens", { name, hi: n, value: JSON.stringify(value) });
          out[memory] = value === n ? null : value; // the last token chosen: all of them
        } else {
          const chosen = memory in out ? out[memory] : value;
          if (n && value !== null && value !== undefined) value = chosen === null ? n : Math.min(chosen, n);
          out[memory] = chosen;
        }
      } else if (control.kind === "number") {
        if (!isInt(value) || value < control.lo || value > control.hi) throw invalid(spec, "int", { name, lo: control.lo, hi: control.hi, value: JSON.stringify(value) });
      } else { // a select
        const offered = choicesOf(control, out);
        const ok = offered.includes(value) && typeof value === typeof offered[0];
        if (!ok && given) {
          if (control.rule === "upto") throw invalid(spec, "int", { name, lo: control.lo, hi: offered[offered.length - 1], value: JSON.stringify(value) });
          throw invalid(spec, control.rule === "divisors" ? "divisors" : "choice",
            { name, choices: offered, of: control.of, limit: out[control.of], value: JSON.stringify(value) });
        }
        if (!ok) value = nextValid(offered, value);
      }
      out[name] = value;
    }
    return out;
  }

  /**
   * What the page says about settings that followed others when `changes` turned `before` into `after`
   * (spec.follow_notes), {name: text} in the spec's order: a divisor or a bounded setting that had to
   * change, and a setting that follows a sentence's length while it is below the value chosen. A setting the
   * reader changed gets no note.
   */
  function followNotes(spec, before, after, changes) {
    const templates = spec.messages.follows, notes = {};
    const label = (name) => spec.controls.find((c) => c.name === name).label;
    for (const control of spec.controls) {
      const { name, rule } = control;
      if (!control.setting || !rule || name in changes) continue;
      const value = after[name] === undefined ? null : after[name];
      const old = before[name] === undefined ? null : before[name];
      if ((rule === "divisors" || rule === "upto") && old !== value) {
        notes[name] = format(templates[rule], { label: control.label, old, value, of: label(control.of), limit: after[control.of] });
      } else if (rule === "tokens") {
        const chosen = after[chosenKey(name)];
        if (isInt(chosen) && isInt(value) && value < chosen) {
          notes[name] = format(templates[rule], { label: control.label, value, chosen, s: value !== 1 ? "s" : "" });
        }
      }
    }
    return notes;
  }

  Object.assign(ns, { ReaderError, format, choicesOf, explorerChoices, nextValid, chosenKey, mergeSettings, followNotes });
})(globalThis);
