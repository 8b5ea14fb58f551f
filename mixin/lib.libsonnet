// Helpers of the mixin's sources.
{
  // fold joins the lines of a text block with spaces, as YAML's folded
  // scalars (>-) do: an annotation written over several lines reads as one.
  fold(text):: std.join(' ', std.split(std.rstripChars(text, '\n'), '\n')),

  // runbook is the link to an alert's section of the runbook.
  runbook(config, alert):: config.runbookURLBase + '#' + std.asciiLower(alert),

  // duration says a `for:` ('2m') or a number of seconds in words, for
  // annotations that state it: '2m' -> '2 minutes', 86400 -> 'a day',
  // 604800 -> 'a week'.
  duration(d)::
    local seconds =
      if std.isNumber(d) then d
      else
        local n = std.parseInt(d[:std.length(d) - 1]), unit = d[std.length(d) - 1];
        n * { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[unit];
    local words(n, one, many) = if n == 1 then one else '%d %s' % [n, many];
    if seconds % 604800 == 0 then words(seconds / 604800, 'a week', 'weeks')
    else if seconds % 86400 == 0 then words(seconds / 86400, 'a day', 'days')
    else if seconds % 3600 == 0 then words(seconds / 3600, 'an hour', 'hours')
    else if seconds % 60 == 0 then words(seconds / 60, 'a minute', 'minutes')
    else words(seconds, 'a second', 'seconds'),
}
