-- Vote patterns: what feeds every estimate, from a long table of verdicts.
-- judge_results(item_id, judge, verdict, gold): one row per item and judge; verdict and gold are class labels
-- as text (NULL: no verdict, no gold). Each item becomes its pattern -- every judge's verdict, written as
-- <length>:<judge><length>:<verdict> pairs in sorted order -- and its gold; items with the same pattern and gold
-- are counted. Labeled items (gold given) make the (judges, correct) histogram, unlabeled ones (gold NULL) the
-- patterns the vote-split estimate uses: `betaconform fit` reads this output (columns pattern, gold, items).
SELECT pattern, gold, COUNT(*) AS items
FROM (
  SELECT item_id,
         concat_ws('', array_sort(array_agg(
           concat(CAST(length(judge) AS VARCHAR(12)), ':', judge, CAST(length(verdict) AS VARCHAR(12)), ':', verdict)
         ) FILTER (WHERE verdict IS NOT NULL))) AS pattern,
         COUNT(verdict) AS judges,
         MAX(gold) AS gold
  FROM judge_results
  GROUP BY item_id
) AS per_item
WHERE judges > 0
GROUP BY pattern, gold
