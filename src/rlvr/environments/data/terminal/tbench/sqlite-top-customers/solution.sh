#!/bin/bash
set -euo pipefail
cd /app
sqlite3 db/shop.db .schema
sqlite3 db/shop.db "SELECT status, COUNT(*) FROM orders GROUP BY status;"
mkdir -p queries reports
cat > queries/top_customers.sql <<'SQL'
SELECT c.id AS customer_id,
       c.name AS name,
       ROUND(SUM(i.quantity * i.unit_price), 2) AS revenue
FROM customers AS c
JOIN orders AS o ON o.customer_id = c.id
JOIN order_items AS i ON i.order_id = o.id
WHERE o.order_date >= '2023-01-01' AND o.order_date < '2024-01-01'
  AND o.status IN ('shipped', 'delivered')
GROUP BY c.id, c.name
ORDER BY revenue DESC, c.id ASC
LIMIT 5;
SQL
sqlite3 -header -csv db/shop.db < queries/top_customers.sql > reports/top_customers.csv
cat reports/top_customers.csv
