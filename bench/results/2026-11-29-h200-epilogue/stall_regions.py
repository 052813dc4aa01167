import csv,sys
rows=list(csv.reader(open(sys.argv[1])))
hdr=rows[1]; data=rows[2:]
iS=hdr.index("Warp Stall Sampling (All Samples)")
tot=sum(int(r[iS]) for r in data)
cuts=[(0,380,'prologue/producer'),(380,656,'consumer tile setup'),(656,663,'full wait'),(663,723,'mma issue'),(723,724,'depbar 1'),(724,734,'release/loop'),(734,735,'depbar 0'),(735,1274,'epilogue'),(1274,1298,'tail')]
for a,b,n in cuts:
    s=sum(int(r[iS]) for r in data[a:b]); print("%-22s %6.2f%%"%(n,100*s/tot))
